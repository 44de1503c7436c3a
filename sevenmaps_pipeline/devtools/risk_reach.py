"""What any words-only rule can reach on the tool corpus: a linear model over a tool's words, fit and scored by
publisher-grouped cross-validation (docs/methodology.md, "What any words-only rule can reach").

The rules (rules/risk.py) are measured side by side in devtools/risk_corpus.py. This asks another question of
the same tools, so that a goal set for the rules can be read against what words can do at all: a logistic
regression over the words of each tool's name and description (no annotations, no argument names), fit on the
tools of nine tenths of the publishers and scoring the tools of the tenth, ten times over, so that every tool is
scored by a model that never saw its publisher. Sweeping the threshold on those scores gives the trade-off
between calling changing tools read-only and agreeing on read-only vs changing. A threshold chosen on the very
scores it is measured on flatters a little; the `honest` points choose each fold's threshold on the other nine.
Two variants ask whether more would help: the same model over every field a tool list gives but the
annotations (its title, arguments and outputSchema, and its server's other tools, as well as the words), and the
words on the servers whose annotations tell their tools apart (leaving out a server that marks every tool
changing). Never imported by the product: the map's levels are the rules'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sparse
from scipy.optimize import minimize
from scipy.stats import rankdata

from ..rules.risk import classify, default_vocabulary
from .bench_history import record
from .risk_corpus import Shares, annotated_level
from .tool_corpus import HOLDOUT, CorpusServer, load_holdout, load_servers, publisher, side_of

FOLDS = 10
SEED = 37
# Strength of the weights' penalty, on the mean log-loss, chosen on this corpus (so it flatters the model a little).
# At 1e-3 the 1% point's agreement moved 63.5% -> 65.3% and the share at 93% agreement 7.9% -> 9.0%; at 1e-5,
# 62.2% and 10.3%. A different SEED moves the 1% point about as much (62.8% to 66.8% over seeds 37-40).
L2 = 3e-4
# A word counts only where at least two publishers of the training folds use it: one publisher's habit of
# labelling is not what a word means.
MIN_PUBLISHERS = 2
CAPS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.10)  # shares of changing tools called read-only
AGREEMENT_GOAL, UNSAFE_GOAL = 0.93, 0.01  # issue 37's pair (docs/methodology.md)

_NAME_PARTS = re.compile(r"[_\-./:\s]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[a-z][a-z0-9']*")
_SENTENCE_END = re.compile(r"\.\s|\n|\.$")


@dataclass(frozen=True)
class Scored:
    """One tool whose annotations decide read-only or changing, as the measure needs it."""

    publisher: str
    side: str  # of the corpus (tool_corpus.side_of): development, evaluation or holdout
    changing: bool  # the answer: its server's annotations
    level: str | None  # green, yellow or red where the annotations decide one
    rules_level: str  # the rules' words-only estimate
    words: frozenset[str]


@dataclass(frozen=True)
class Point(Shares):
    """The figures of one way of calling tools read-only."""

    threshold: float | None
    binary_agree: int
    binary_total: int
    changing_called_read_only: int
    changing_total: int
    level_agree: int
    level_total: int


def name_tokens(name: str) -> list[str]:
    """`getUserByID`, `get_user-by.id` and `get user by id` alike: ["get", "user", "by", "id"]."""
    return [token.lower() for part in _NAME_PARTS.split(name) for token in _CAMEL.findall(part)]


def words_of(name: str, description: str) -> frozenset[str]:
    """The features of one tool, each marked with where it stands: the name's tokens, its first and last token
    and its pairs of tokens; the description's first word, its words, and its first sentence's words and pairs."""
    tokens = name_tokens(name)
    out = {f"n:{t}" for t in tokens} | {f"nb:{a}_{b}" for a, b in zip(tokens, tokens[1:], strict=False)}
    if tokens:
        out |= {f"nf:{tokens[0]}", f"nl:{tokens[-1]}"}
    text = description.strip()
    words = _WORD.findall(text.lower())
    out |= {f"df:{words[0]}"} if words else {"nodesc"}
    out |= {f"d:{w}" for w in words}
    end = _SENTENCE_END.search(text)
    sentence = _WORD.findall((text[:end.start()] if end else text).lower())
    out |= {f"s:{w}" for w in sentence} | {f"sb:{a}_{b}" for a, b in zip(sentence, sentence[1:], strict=False)}
    return frozenset(out)


def field_features(tool: dict[str, Any]) -> frozenset[str]:
    """What a tool's fields say besides its name and description: its title's words, whether it declares an
    outputSchema, and its arguments (argument_features). Never its annotations: they are the answer."""
    title = tool.get("title")
    words = {f"ti:{w}" for w in _WORD.findall(title.lower())} if isinstance(title, str) else set()
    return frozenset(argument_features(tool) | words | {f"os:{isinstance(tool.get('outputSchema'), dict)}"})


def argument_features(tool: dict[str, Any]) -> frozenset[str]:
    """What a tool's inputSchema says: each argument's name (whole, its tokens, whether required), each
    argument's type and the words of its description, whether any argument has an enum or a default, and how
    many there are."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return frozenset({"a:none"})
    listed = schema.get("required") if isinstance(schema, dict) else None
    required = {str(name) for name in listed} if isinstance(listed, list) else set()
    out = {f"a:count{min(len(properties), 6)}", f"a:required{min(len(required & set(properties)), 4)}"}
    for name, spec in properties.items():
        tokens = name_tokens(str(name))
        out |= {f"a:{'_'.join(tokens)}"} | {f"at:{t}" for t in tokens}
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(kind, str):
            out.add(f"aty:{kind}")
        if str(name) in required:
            out |= {f"ar:{'_'.join(tokens)}"} | ({f"arty:{kind}"} if isinstance(kind, str) else set())
        if isinstance(spec, dict):
            out |= {f"a:has_{key}" for key in ("enum", "default") if key in spec}
            described = spec.get("description")
            if isinstance(described, str):
                out |= {f"ad:{w}" for w in _WORD.findall(described.lower())}
    return frozenset(out)


def server_features(tools: Sequence[dict[str, Any]]) -> frozenset[str]:
    """What a tool's server says of it: how many tools it lists (in fives) and the first token of each name."""
    firsts = {tokens[0] for tokens in (name_tokens(str(t.get("name") or "")) for t in tools) if tokens}
    return frozenset({f"sv:tools{min(len(tools), 20) // 5}"} | {f"sv:first:{t}" for t in firsts})


def says_every_tool_changes(server: CorpusServer) -> bool:
    """A server whose annotations call every one of at least three tools changing: they tell none apart."""
    said = [annotated_level(t.get("annotations"))[0] for t in server.tools if isinstance(t, dict)]
    said = [read_only for read_only in said if read_only is not None]
    return len(said) >= 3 and not any(said)


def corpus_rows(servers: Iterable[CorpusServer], every_field: bool = False) -> list[Scored]:
    """Every tool of `servers` whose annotations say read-only or changing, with the rules' estimate of it; its
    features the words of its name and description, or with `every_field` its other fields' and its server's
    too."""
    vocab = default_vocabulary()
    rows = []
    for server in servers:
        tools = [t for t in server.tools if isinstance(t, dict)]
        context = server_features(tools) if every_field else frozenset()
        for tool in tools:
            read_only, level = annotated_level(tool.get("annotations"))
            if read_only is None:
                continue
            estimate = classify({**tool, "server": server.id}, vocab, ignore_annotations=True).risk
            words = words_of(str(tool.get("name") or ""), str(tool.get("description") or ""))
            rows.append(Scored(publisher=publisher(server.publisher) or server.id, side=side_of(server),
                               changing=not read_only, level=level, rules_level=estimate,
                               words=words | field_features(tool) | context if every_field else words))
    return rows


def grouped_folds(publishers: Sequence[str], folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """Each row's fold: every tool of a publisher in one fold, the folds about equal in tools (the largest
    publishers first, each to the lightest fold; ties in size in a seeded order)."""
    counts: dict[str, int] = {}
    for name in publishers:
        counts[name] = counts.get(name, 0) + 1
    order = sorted(counts)
    np.random.default_rng(seed).shuffle(order)
    order.sort(key=lambda name: -counts[name])  # stable: equal sizes keep the seeded order
    load, fold_of = [0] * folds, {}
    for name in order:
        fold = load.index(min(load))
        fold_of[name] = fold
        load[fold] += counts[name]
    return np.array([fold_of[name] for name in publishers], dtype=np.int64)


def _vocabulary(rows: Sequence[Scored], chosen: np.ndarray) -> dict[str, int]:
    users: dict[str, set[str]] = {}
    for i in chosen:
        for word in rows[i].words:
            users.setdefault(word, set()).add(rows[i].publisher)
    return {w: j for j, w in enumerate(sorted(w for w, who in users.items() if len(who) >= MIN_PUBLISHERS))}


def _matrix(rows: Sequence[Scored], chosen: np.ndarray, vocabulary: dict[str, int]) -> sparse.csr_matrix:
    at_row, at_column = [], []
    for n, i in enumerate(chosen):
        for word in rows[i].words:
            column = vocabulary.get(word)
            if column is not None:
                at_row.append(n)
                at_column.append(column)
    return sparse.csr_matrix((np.ones(len(at_row)), (at_row, at_column)), shape=(len(chosen), len(vocabulary)))


def fit(x: sparse.csr_matrix, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Logistic regression (intercept first, then one weight a column): the mean log-loss plus l2/2 |w|^2,
    minimised by L-BFGS from zero, so the same rows give the same weights."""
    transposed, n = x.T.tocsr(), x.shape[0]

    def loss_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ theta[1:] + theta[0]
        residual = (1.0 / (1.0 + np.exp(-z)) - y) / n
        loss = float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * theta[1:] @ theta[1:])
        return loss, np.concatenate(([residual.sum()], transposed @ residual + l2 * theta[1:]))

    found = minimize(loss_and_gradient, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": 500})
    return np.asarray(found.x)


def out_of_fold(rows: Sequence[Scored], fold: np.ndarray, l2: float = L2) -> np.ndarray:
    """p(changing) of every row from the model fit on the other folds' rows."""
    y = np.array([r.changing for r in rows], dtype=np.float64)
    p = np.zeros(len(rows))
    for k in np.unique(fold):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        vocabulary = _vocabulary(rows, train)
        theta = fit(_matrix(rows, train, vocabulary), y[train], l2)
        p[test] = 1.0 / (1.0 + np.exp(-(_matrix(rows, test, vocabulary) @ theta[1:] + theta[0])))
    return p


@dataclass(frozen=True)
class _Answers:
    changing: np.ndarray  # bool
    fallback_agrees: np.ndarray  # int: 1 where a tool not called green gets its annotated level
    green_agrees: np.ndarray  # int: 1 where the annotated level is green
    has_level: np.ndarray  # bool

    @classmethod
    def of(cls, rows: Sequence[Scored]) -> _Answers:
        # A tool not called green keeps the rules' yellow or red; one the rules called green becomes yellow.
        fallback = ["yellow" if r.rules_level == "green" else r.rules_level for r in rows]
        return cls(changing=np.array([r.changing for r in rows], dtype=bool),
                   fallback_agrees=np.array([r.level == f for r, f in zip(rows, fallback, strict=True)],
                                             dtype=np.int64),
                   green_agrees=np.array([r.level == "green" for r in rows], dtype=np.int64),
                   has_level=np.array([r.level is not None for r in rows], dtype=bool))

    def where(self, chosen: np.ndarray) -> _Answers:
        return _Answers(self.changing[chosen], self.fallback_agrees[chosen], self.green_agrees[chosen],
                        self.has_level[chosen])


def point_of(answers: _Answers, green: np.ndarray, threshold: float | None = None) -> Point:
    """The figures when exactly the rows in `green` are called read-only."""
    changing, n = answers.changing, len(green)
    level = np.where(green, answers.green_agrees, answers.fallback_agrees)
    return Point(threshold=threshold, binary_agree=int(np.sum(green != changing)), binary_total=n,
                 changing_called_read_only=int(np.sum(green & changing)), changing_total=int(changing.sum()),
                 level_agree=int(level[answers.has_level].sum()), level_total=int(answers.has_level.sum()))


def curve(answers: _Answers, p: np.ndarray, eligible: np.ndarray) -> list[Point]:
    """One point per distinct threshold t (green: eligible and p <= t), and the point where nothing is green;
    the same figures point_of gives, counted cumulatively."""
    none_green = point_of(answers, np.zeros(len(p), dtype=bool), float("-inf"))
    order = np.flatnonzero(eligible)[np.argsort(p[eligible], kind="stable")]
    if not len(order):
        return [none_green]
    ch = answers.changing[order].astype(np.int64)
    level_gain = np.where(answers.has_level[order], answers.green_agrees[order] - answers.fallback_agrees[order], 0)
    cum_changing, cum_read_only, cum_level = np.cumsum(ch), np.cumsum(1 - ch), np.cumsum(level_gain)
    values = p[order]
    last = np.flatnonzero(np.append(values[1:] != values[:-1], True))  # the last row of each distinct value
    points = [none_green]
    for i in last:
        points.append(Point(threshold=float(values[i]),
                            binary_agree=none_green.binary_agree + int(cum_read_only[i]) - int(cum_changing[i]),
                            binary_total=none_green.binary_total, changing_called_read_only=int(cum_changing[i]),
                            changing_total=none_green.changing_total,
                            level_agree=none_green.level_agree + int(cum_level[i]), level_total=none_green.level_total))
    return points


def best_within(points: Sequence[Point], cap: float) -> Point | None:
    """The point of highest agreement whose share of changing tools called read-only is at most `cap`."""
    within = [q for q in points if q.changing_as_read_only_share <= cap]
    return max(within, key=lambda q: (q.binary_share, -q.changing_called_read_only)) if within else None


def least_unsafe_at(points: Sequence[Point], floor: float) -> Point | None:
    """The point calling the fewest changing tools read-only among those agreeing on at least `floor`."""
    reaching = [q for q in points if q.binary_share >= floor]
    return min(reaching, key=lambda q: (q.changing_called_read_only, -q.binary_agree)) if reaching else None


def honest_within(answers: _Answers, p: np.ndarray, eligible: np.ndarray, fold: np.ndarray,
                  cap: float) -> tuple[np.ndarray, list[float]]:
    """The tools called read-only when each fold is called at the threshold best_within(cap) chooses on the
    other folds' scores alone; with the thresholds chosen, fold by fold."""
    green, thresholds = np.zeros(len(p), dtype=bool), []
    for k in np.unique(fold):
        others, mine = fold != k, fold == k
        chosen = best_within(curve(answers.where(others), p[others], eligible[others]), cap)
        t = chosen.threshold if chosen is not None and chosen.threshold is not None else float("-inf")
        thresholds.append(t)
        green[mine] = eligible[mine] & (p[mine] <= t)
    return green, thresholds


def _named(cap: float) -> str:
    return f"within_{cap * 100:g}pct".replace(".", "_")


def _calls(answers: _Answers, p: np.ndarray, eligible: np.ndarray, fold: np.ndarray,
           holdout: np.ndarray) -> dict[str, Any]:
    """One way of calling tools read-only (green where eligible and p <= t) at every operating point."""
    points = curve(answers, p, eligible)
    out: dict[str, Any] = {_named(cap): (best_within(points, cap) or points[0]).figures() for cap in CAPS}
    reaching = least_unsafe_at(points, AGREEMENT_GOAL)
    out["at_goal_agreement"] = reaching.figures() if reaching else None
    out["best"] = max(points, key=lambda q: q.binary_share).figures()
    green, thresholds = honest_within(answers, p, eligible, fold, UNSAFE_GOAL)
    out["honest_within_1pct"] = {**point_of(answers, green).figures(), "thresholds": thresholds,
                                 "holdout": point_of(answers.where(holdout), green[holdout]).figures()}
    return out


def _against(answers: _Answers, p: np.ndarray, rules_green: np.ndarray, holdout: np.ndarray) -> dict[str, Any]:
    """The model at the rules' own share of changing tools called read-only, and at their own agreement: on every
    tool, and on the holdout's alone (where the rules were blind)."""
    out: dict[str, Any] = {}
    for name, chosen in (("all", np.ones(len(p), dtype=bool)), ("holdout", holdout)):
        sub = answers.where(chosen)
        points = curve(sub, p[chosen], np.ones(int(chosen.sum()), dtype=bool))
        rules = point_of(sub, rules_green[chosen])
        at_share = best_within(points, rules.changing_as_read_only_share)
        at_agreement = least_unsafe_at(points, rules.binary_share)
        out[name] = {"at_rules_share": at_share.figures() if at_share else None,
                     "at_rules_agreement": at_agreement.figures() if at_agreement else None,
                     "as_good_on_all_three": sum(1 for q in points if q.binary_agree >= rules.binary_agree
                                                 and q.changing_called_read_only <= rules.changing_called_read_only
                                                 and q.level_agree >= rules.level_agree)}
    return out


def measure(servers: Sequence[CorpusServer] | None = None, folds: int = FOLDS) -> dict[str, Any]:
    """The rules, the model alone and the rules with the model's veto on their green, on every annotated tool of
    the corpus and its holdout (or of `servers`), each tool scored by a model that never saw its publisher; and
    the model's reach with every field, and on the servers whose annotations tell tools apart."""
    chosen = list(servers) if servers is not None else load_servers() + load_holdout()
    told_apart = [server for server in chosen if not says_every_tool_changes(server)]
    return {**measured(corpus_rows(chosen), folds),
            "variants": {"every_field": reach(measured(corpus_rows(chosen, every_field=True), folds)),
                         "told_apart": {**reach(measured(corpus_rows(told_apart), folds)),
                                        "servers_left_out": len(chosen) - len(told_apart)}}}


def reach(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of a measure that say how far its model reaches."""
    model = result["model"]
    return {"corpus": result["corpus"], "auc": result["auc"], "rules": result["rules"],
            "model": {key: model[key] for key in ("within_1pct", "at_goal_agreement", "honest_within_1pct")}
            | {"at_rules_agreement": {name: model["against_the_rules"][name]["at_rules_agreement"]
                                      for name in ("all", "holdout")}}}


def measured(rows: Sequence[Scored], folds: int) -> dict[str, Any]:
    """measure()'s figures for one set of rows."""
    fold = grouped_folds([r.publisher for r in rows], folds)
    p = out_of_fold(rows, fold)
    answers = _Answers.of(rows)
    rules_green = np.array([r.rules_level == "green" for r in rows], dtype=bool)
    holdout = np.array([r.side == HOLDOUT for r in rows], dtype=bool)
    changing = answers.changing
    auc = ((rankdata(p)[changing].sum() - changing.sum() * (changing.sum() + 1) / 2)
           / max(1, changing.sum() * (~changing).sum()))
    return {"corpus": {"tools": len(rows), "changing": int(changing.sum()), "folds": folds,
                       "publishers": len({r.publisher for r in rows}), "holdout_tools": int(holdout.sum())},
            "auc": float(auc),
            "rules": {**point_of(answers, rules_green).figures(),
                      "holdout": point_of(answers.where(holdout), rules_green[holdout]).figures()},
            "model": {**_calls(answers, p, np.ones(len(rows), dtype=bool), fold, holdout),
                      "against_the_rules": _against(answers, p, rules_green, holdout)},
            "rules_then_model": _calls(answers, p, rules_green, fold, holdout)}


def _line(what: str, figures: dict[str, Any] | None) -> str:
    if figures is None:
        return f"  {what:<46} not reached"
    return (f"  {what:<46} {figures['binary_share']:6.1%} {figures['changing_as_read_only_share']:7.1%} "
            f"{figures['level_share']:7.1%}   ({figures['binary_agree']}/{figures['binary_total']}, "
            f"{figures['changing_called_read_only']}/{figures['changing_total']})")


def report(result: dict[str, Any]) -> str:
    corpus = result["corpus"]
    lines = [f"what any words-only rule can reach: {corpus['tools']} annotated tools ({corpus['changing']} changing) "
             f"of {corpus['publishers']} publishers, {corpus['folds']} folds by publisher; "
             f"a logistic regression over name and description words, AUC {result['auc']:.3f}",
             f"  {'':<46} {'agree':>6} {'ch->ro':>7} {'levels':>7}",
             _line("the rules (rules/risk.py), all tools", result["rules"]),
             _line("the rules, holdout tools", result["rules"]["holdout"])]
    for name in ("all", "holdout"):
        against = result["model"]["against_the_rules"][name]
        lines.append(_line(f"the model at the rules' own share, {name}", against["at_rules_share"]))
        lines.append(_line(f"the model at the rules' own agreement, {name}", against["at_rules_agreement"]))
        lines.append(f"  {'':<46} thresholds at least as good as the rules on all three: "
                     f"{against['as_good_on_all_three']}")
    for name, title in (("model", "the model"), ("rules_then_model", "the rules, their green vetoed by the model")):
        calls = result[name]
        lines.append(f" {title}:")
        lines += [_line(f"best with changing called read-only <= {cap:.1%}", calls[_named(cap)]) for cap in CAPS]
        lines.append(_line(f"fewest called read-only at agreement >= {AGREEMENT_GOAL:.0%}", calls["at_goal_agreement"]))
        lines.append(_line("highest agreement", calls["best"]))
        honest = calls["honest_within_1pct"]
        lines.append(_line(f"<= {UNSAFE_GOAL:.0%}, each fold's threshold from the others", honest))
        lines.append(_line("  the same, holdout tools", honest["holdout"]))
    variants = result["variants"]
    for name, title in (("every_field", "the model over every field but the annotations (words, title, arguments, "
                                       "outputSchema, the server's other tools)"),
                        ("told_apart", f"words, leaving out the {variants['told_apart']['servers_left_out']} "
                                       "servers that call every tool changing")):
        variant = variants[name]
        lines.append(f" {title}: {variant['corpus']['tools']} tools, AUC {variant['auc']:.3f}")
        if name == "told_apart":  # on every field the rules' figures are the words' above
            lines += [_line("the rules", variant["rules"]),
                      _line("  the same, holdout tools", variant["rules"]["holdout"])]
        lines += [_line(f"best with changing called read-only <= {UNSAFE_GOAL:.1%}", variant["model"]["within_1pct"]),
                  _line("  each fold's threshold from the others", variant["model"]["honest_within_1pct"]),
                  _line("  the same, holdout tools", variant["model"]["honest_within_1pct"]["holdout"]),
                  _line(f"fewest called read-only at agreement >= {AGREEMENT_GOAL:.0%}",
                        variant["model"]["at_goal_agreement"]),
                  _line("at the rules' own agreement", variant["model"]["at_rules_agreement"]["all"]),
                  _line("  the same, holdout tools", variant["model"]["at_rules_agreement"]["holdout"])]
    return "\n".join(lines)


def run_bench() -> None:
    """`sevenmaps bench --only risk-reach`: printed and kept in the benches' history."""
    result = measure()
    print(report(result), flush=True)
    record("risk-reach", result)
