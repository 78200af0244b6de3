"""Scheduler option forms generated from the option schema that ``wattsched schedulers`` prints.

A preset's form shows its switches (the options that choose a slot's piece: ``placement``, ``shutdown``,
and for ``compose`` one per slot) and the options of the pieces those switches choose now, each as a
:class:`Field` (a select for choices and booleans, a number box for numbers, a text area for JSON
objects). Every field may stay empty: empty means the option's default, as when ``-o`` leaves it out.

:func:`options_from_form` turns the submitted fields back into the JSON options of ``wattsched run -o`` and
checks them with the same :class:`~wattsched.schedulers.options.Option` rules as the CLI, so each error
is the CLI's one line, attached to the field it names. Pure: no request, no file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wattsched.base.errors import OptionError
from wattsched.base.validate import load_json, option_error
from wattsched.schedulers.options import Option, describe_all
from wattsched.schedulers.pieces import REGISTRY, SLOTS
from wattsched.schedulers.presets import PRESETS, Preset, unknown_preset
from wattsched.web.workspace import PATH_OPTIONS, shown_value

__all__ = ["Field", "FIELD_PREFIX", "option_fields", "options_from_form", "preset_names"]

#: Form names of option fields: ``opt.budget_fraction``.
FIELD_PREFIX = "opt."
#: Where a form error that names no field is shown.
GENERAL = "_general"
#: What a path option takes on the page, shown as its valid values.
PATH_HELP = ("shipped:NAME, a model installed with wattsched (shipped:eamc, the default), or workspace:NAME, a "
             "folder NAME of the workspace's inputs; not a path of the server")


@dataclass
class Field:
    """One option on the form.

    Attributes:
        name: the option's key (the form field is ``opt.<name>``).
        widget: ``select``, ``number`` or ``json``.
        choices: ``(value, label)`` of a select; the first is ``("", "default: ...")``.
        help: the option's one-line help; ``valid`` its type and range as ``wattsched schedulers`` shows.
        value: the text submitted; ``error`` the CLI's one-line message about it.
        switch: the field chooses a slot's piece (changing it changes the other fields).
        slot: the slot whose piece declares (or whose piece the switch chooses) this option.
    """

    name: str
    widget: str
    help: str
    valid: str
    default: str
    choices: list[tuple[str, str]] = field(default_factory=list)
    value: str = ""
    error: str = ""
    switch: bool = False
    slot: str = ""
    step: str = "any"

    @property
    def form_name(self) -> str:
        return FIELD_PREFIX + self.name


def preset_names() -> list[str]:
    return list(PRESETS)


def _preset(scheduler: str) -> Preset:
    preset = PRESETS.get(scheduler)
    if preset is None:
        raise OptionError(unknown_preset(scheduler))
    return preset


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _field(option: Option, *, switch: bool, slot: str) -> Field:
    default = _show(option.default)
    base = dict(name=option.name, help=option.help, valid=option.describe(), default=default, switch=switch, slot=slot)
    if option.choices is not None or option.type is bool:
        values = list(option.choices) if option.choices is not None else [True, False]
        return Field(widget="select", choices=[("", f"default: {default}")] + [(_show(v), _show(v)) for v in values],
                     **base)  # type: ignore[arg-type]
    if option.type in (int, float):
        return Field(widget="number", step="1" if option.type is int else "any", **base)  # type: ignore[arg-type]
    return Field(widget="json" if option.type is dict else "text", **base)  # type: ignore[arg-type]


def _switch_values(preset: Preset, form: Mapping[str, str]) -> dict[str, Any]:
    """The value of each switch from the form; its default when empty or not valid (its field says why)."""
    values = {}
    for sw in preset.switches:
        raw = form.get(FIELD_PREFIX + sw.option.name, "").strip()
        try:
            parsed = _parse(sw.option, raw) if raw else sw.option.default
            values[sw.option.name] = parsed if parsed in sw.pieces else sw.option.default
        except (OptionError, TypeError):  # unhashable JSON: the field's own check reports it
            values[sw.option.name] = sw.option.default
    return values


def _chosen(preset: Preset, switch_values: Mapping[str, Any]) -> dict[str, str]:
    chosen = {**preset.defaults, **preset.fixed}
    for sw in preset.switches:
        chosen[sw.slot] = sw.pieces[switch_values[sw.option.name]]
    return chosen


def option_fields(scheduler: str, form: Mapping[str, str] | None = None) -> list[Field]:
    """The fields of preset ``scheduler`` given the switches chosen in ``form`` (defaults otherwise):
    its switches first, then the options of the chosen pieces in slot order, each once.

    Raises:
        OptionError: ``scheduler`` is not a preset.
    """
    form = form or {}
    preset = _preset(scheduler)
    fields = [_field(sw.option, switch=True, slot=sw.slot) for sw in preset.switches]
    chosen = _chosen(preset, _switch_values(preset, form))
    seen = {f.name for f in fields}
    for slot in SLOTS:
        for option in REGISTRY[slot][chosen[slot]].options:
            if option.name not in seen:
                seen.add(option.name)
                fields.append(_field(option, switch=False, slot=f"{slot} '{chosen[slot]}'"))
    for f in fields:
        f.value = form.get(f.form_name, "").strip()
        if f.name in PATH_OPTIONS:
            f.valid = f"{f.name} ({PATH_HELP})"
    return fields


def _parse(option: Option, text: str) -> Any:
    """The JSON value of a field's text: numbers, ``true``/``false``, ``null`` and objects as JSON; a text
    that is not valid JSON stays a string (then :meth:`Option.check` says what was expected)."""
    if option.type is str:
        return None if (text == "null" and option.nullable) else text
    try:  # the CLI's checked reader: nesting bounded, lone UTF-16 surrogates and non-finite numbers refused
        return load_json(text, f"option '{option.name}'", option_error, unique_keys=True)
    except OptionError as error:
        if option.type is dict or not _malformed(text):
            raise
        return text


def _malformed(text: str) -> bool:
    """``text`` is not JSON at all (rather than JSON :func:`load_json` refuses: too deep, a lone surrogate)."""
    if text.count("[") + text.count("{") >= 64:  # never a number, a boolean or a name: not worth parsing
        return False
    try:
        json.loads(text)
    except ValueError:  # JSONDecodeError, or an integer too long to convert
        return not text.lstrip("-").isdigit()
    return False


def options_from_form(scheduler: str, form: Mapping[str, str], resolve: Callable[[str, Any], Any] | None = None
                      ) -> tuple[dict[str, Any], list[Field], dict[str, str]]:
    """The options of ``wattsched run -o`` from a submitted form, the fields (with values and errors) and
    the errors by option name (:data:`GENERAL` for one that names no field).

    Each filled field is checked on its own (:meth:`Option.check`, the CLI's message), then the whole set
    as ``wattsched run`` does (:meth:`Preset.validate` and building the pieces: options that exclude or
    require each other). A filled ``opt.*`` field the preset with these switches does not show is refused
    as the CLI refuses it (an unknown option, or one of a piece not chosen), never dropped. A path option
    (:data:`PATH_OPTIONS`) is a choice that ``resolve(name, value)`` turns into the folder the scheduler is
    built with (its :class:`OptionError` is the field's error; without ``resolve`` every value is refused);
    the options returned keep the choice.

    Raises:
        OptionError: ``scheduler`` is not a preset.
    """
    preset = _preset(scheduler)
    fields = option_fields(scheduler, form)
    valid = preset.describe_options()
    options: dict[str, Any] = {}
    errors: dict[str, str] = {}
    declared = {o.name: o for o in preset.options}
    for f in fields:
        if not f.value:
            continue
        option = declared[f.name]
        try:
            options[f.name] = option.check(_parse(option, f.value), preset.name, valid)
        except OptionError as error:
            errors[f.name] = str(error)
    shown = {f.name for f in fields}
    for key, value in form.items():
        # an empty name (a field 'opt.') too: the CLI refuses -o '{"": 1}' ("unknown option ''"), it was dropped
        name = key[len(FIELD_PREFIX):]
        if key.startswith(FIELD_PREFIX) and name not in shown and str(value).strip():
            errors.setdefault(GENERAL, _not_taken(preset, name, options, valid))
    built = dict(options)
    for name in sorted(PATH_OPTIONS & options.keys()):
        if options[name] is not None and name not in errors:
            try:
                if resolve is None:
                    raise OptionError(f"option '{name}': not taken from a form ({PATH_HELP})")
                built[name] = resolve(name, options[name])
            except OptionError as error:
                errors[name] = str(error)
    if not errors:
        try:
            preset.build(built)
        except OptionError as error:
            errors[_named(str(error), shown)] = str(error)
    for f in fields:
        f.error = errors.get(f.name, "")
    return options, fields, errors


def _named(message: str, fields: set[str]) -> str:
    """The field an error names first (:data:`GENERAL` when none)."""
    named = [n for n in re.findall(r"'([A-Za-z0-9_]+)'", message) if n in fields]
    return named[0] if named else GENERAL


def _not_taken(preset: Preset, name: str, options: Mapping[str, Any], valid: str) -> str:
    """The CLI's error for option ``name``, which the form of ``preset`` with these switches does not show:
    :meth:`Preset.validate`'s (unknown, or of a piece the switches do not choose)."""
    name = shown_value(name)
    switches = {sw.option.name: options[sw.option.name] for sw in preset.switches if sw.option.name in options}
    try:
        preset.validate({**switches, name: None})
    except OptionError as error:
        if f"'{name}'" in str(error):
            return str(error)
    return f"unknown option '{name}' for {preset.name}; valid options: {valid}"
