"""``tilefold passes [PASS]``: the compiler's passes with their one-line summaries.

Reads: the pass registry (:mod:`tilefold.passes.registry`) and the pipelines
(:mod:`tilefold.passes.pipelines`). Writes: each pipeline's passes in order with their
summaries, then passes in no pipeline; with a pass name, that pass's options and description.
"""

from __future__ import annotations


def add_parser(sub, help: str) -> None:
    p = sub.add_parser("passes", help=help,
                       description="List every pass of the compiler by pipeline, with its summary; name a pass "
                                   "to see its options and description. Pass specs are name{option=value}.")
    p.add_argument("name", nargs="?", help="a pass name (kebab-case), e.g. lower-to-sfpu")
    p.set_defaults(handler=run)


def run(args) -> int:
    from tilefold.passes.pipelines import PIPELINES
    from tilefold.passes.registry import all_passes, description, options, pass_class, summary

    if args.name:
        cls = pass_class(args.name)
        print(f"{cls.name}: {summary(cls)}")
        for option, default in options(cls):
            shown = getattr(default, "name", default)
            print(f"  option {option} (default {shown})")
        print()
        print(description(cls))
        return 0
    passes = all_passes()
    width = max(len(name) for name in passes)
    listed: set[str] = set()
    for pipeline, names in PIPELINES.items():
        print(f"pipeline {pipeline}:")
        for name in names:
            print(f"  {name:<{width}}  {summary(passes[name])}")
            listed.add(name)
    rest = [name for name in passes if name not in listed]
    if rest:
        print("other passes:")
        for name in rest:
            print(f"  {name:<{width}}  {summary(passes[name])}")
    return 0
