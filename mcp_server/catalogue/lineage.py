"""Reading the ``Lineage`` declarations of argument models: which text-carrying fields declare
none (the catalogue refuses to load then), and which strings a call carries under a gated
lineage (the provenance ledger's input). Reads declarations only: builds no validator."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from .vocabulary import GATED_LINEAGE, Lineage


def _carries_text(annotation: object) -> bool:
    """Whether a field of this type can hold free text (``str`` anywhere in it but a
    ``Literal``'s fixed choices; a nested model's own fields are looked at on their own)."""
    if annotation is str or annotation is Any:
        return True
    if get_origin(annotation) is Literal:
        return False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return False
    return any(_carries_text(a) for a in get_args(annotation))


def _nested_models(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    elif get_origin(annotation) is not Literal:
        for a in get_args(annotation):
            yield from _nested_models(a)


def _declared(metadata: list[Any]) -> Lineage | None:
    found = [m for m in metadata if isinstance(m, Lineage)]
    return found[-1] if found else None


def undeclared_lineage(model: type[BaseModel], prefix: str = "") -> list[str]:
    """The fields of ``model`` (and of the models nested in it) that can hold text and declare no
    ``Lineage``, as dotted paths. Reads the declared fields only: no validator is built."""
    missing: list[str] = []
    for name, field in model.model_fields.items():
        if _carries_text(field.annotation) and _declared(field.metadata) is None:
            missing.append(prefix + name)
        for nested in _nested_models(field.annotation):
            missing.extend(undeclared_lineage(nested, f"{prefix}{name}."))
    return missing


def declared_texts(args: BaseModel) -> Iterator[tuple[Lineage, str]]:
    """Every string the call's arguments carry under a gated ``Lineage`` (a list's strings, a
    mapping's values, nested models' fields, a list of models' fields), with its declaration;
    keys as the key names themselves (``provenance.keys_text`` makes them the text they type)."""
    for name, field in type(args).model_fields.items():
        value = getattr(args, name)
        if isinstance(value, BaseModel):
            yield from declared_texts(value)
            continue
        if isinstance(value, (list, tuple)) and any(isinstance(v, BaseModel) for v in value):
            # a list of models (page_fill_form's fields): each one's own declarations
            for item in value:
                if isinstance(item, BaseModel):
                    yield from declared_texts(item)
            continue
        lineage = _declared(field.metadata)
        if lineage is None or lineage not in GATED_LINEAGE:
            continue
        values = value.values() if isinstance(value, Mapping) else value
        if isinstance(values, str):
            yield lineage, values
        elif isinstance(values, (list, tuple)) or isinstance(value, Mapping):
            yield from ((lineage, v) for v in values if isinstance(v, str))
