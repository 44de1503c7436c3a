"""Not the product: the loopback fleet, the synthetic generator, the benches and the demo.

The product (everything else in `sevenmaps_pipeline`) never imports this package; only the CLI's `demo`,
`synth` and `bench` commands and the tests do. What only these tools need is the `devtools` extra.
"""
