"""``wattsched schedulers``: the presets, every piece of every slot, their options and papers."""

from __future__ import annotations

import argparse
import json
from typing import Any


def cmd_schedulers(args: argparse.Namespace) -> int:
    from wattsched.base.errors import OptionError
    from wattsched.schedulers.pieces import REGISTRY, SLOTS
    from wattsched.schedulers.presets import PRESETS, unknown_preset

    def option_json(option: Any) -> dict[str, Any]:
        return {"default": option.default, "help": option.help, "valid": option.describe()}

    presets = PRESETS
    if args.name is not None:
        if args.name not in PRESETS:
            raise OptionError(unknown_preset(args.name))
        presets = {args.name: PRESETS[args.name]}
    pieces = args.name in (None, "compose")  # (compose's options are its pieces')
    if args.json:
        out: dict[str, Any] = {
            "presets": {name: {"description": p.description, "reference": p.reference,
                               "options": {o.name: option_json(o) for o in p.options}} for name, p in presets.items()}}
        if pieces:
            out["pieces"] = {slot: {name: {"description": cls.description, "reference": cls.reference,
                                           "options": {o.name: option_json(o) for o in cls.options}}
                                    for name, cls in REGISTRY[slot].items()} for slot in SLOTS}
        print(json.dumps(out, indent=2, default=str))
        return 0
    print("PRESETS  (-s NAME -o '{...}')\n")
    for name, preset in presets.items():
        print(f"{name}\n    {preset.description}\n    from: {preset.reference}")
        for o in preset.options:
            print(f"    {o.describe()}\n        {o.help}")
        print()
    if not pieces:
        return 0
    print("PIECES  (-s compose -o '{\"SLOT\": \"NAME\", ...}'; each piece's options go in the same object)\n")
    for slot in SLOTS:
        print(f"{slot}:")
        for name, cls in REGISTRY[slot].items():
            ref = f"  [{cls.reference}]" if cls.reference else ""
            print(f"    {name:<16} {cls.description}{ref}")
            for o in cls.options:
                print(f"        {o.describe()}: {o.help}")
        print()
    print("Any pybatsim scheduler also works: a name registered under the 'pybatsim.schedulers' entry point\n"
          "(e.g. backfill-easy), 'package.module:Class', or 'path/to/file.py[:Class]'.")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schedulers", help="list the presets and the pieces they compose, with options and papers",
                       description="List every preset with its options (type, default, valid values) and the paper "
                                   "it comes from, then every piece of every slot (order, backfill, placement, "
                                   "admission, power, frequency) that '-s compose' combines. Give a preset's name "
                                   "to -s of 'wattsched run' or 'serve', and its options to -o as one JSON object; "
                                   "units are in the option names (window_end_s: seconds, budget_j: joules, "
                                   "estimated_idle_w: watts).",
                       epilog="examples:\n"
                              "  wattsched schedulers\n"
                              "  wattsched schedulers energy-bud\n"
                              "  wattsched schedulers compose --json")
    p.add_argument("name", nargs="?", metavar="PRESET",
                   help="list only this preset (compose: with every piece, whose options it takes); default: "
                        "every preset and every piece")
    p.add_argument("--json", action="store_true",
                   help="print the listing as JSON (description, paper and options with default, help and valid "
                        "values)")
    p.set_defaults(func=cmd_schedulers)
