"""Fault-injection tests: wikic killed, raced, fed hostile input, failing backends and
broken state, and what must still hold (../shared/DESIGN.md, "Where the work is not allowed to go wrong")."""
