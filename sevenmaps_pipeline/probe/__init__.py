"""The prober: checks endpoints the 7Maps way (initialize, notifications/initialized, tools/list)."""
