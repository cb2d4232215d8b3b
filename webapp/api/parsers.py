"""The API's JSON parser: DRF's, with two refusals a request body could otherwise turn into a 500.

- Nesting: Python's JSON decoder recurses once per level and raised ``RecursionError`` past
  about 990 levels (issue 31, N3). No request needs more than a flat object, so anything over
  ``MAX_DEPTH`` levels is refused, however deep.
- Lone surrogates: JSON may spell ``"\\ud800"``, which decodes to a Python string that is not
  text (it cannot be encoded as UTF-8, so the form, the database and the renderer all raised:
  N4). Keys and values are both checked.
"""

from __future__ import annotations

import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32
TOO_DEEP = f"The JSON is nested too deeply: at most {MAX_DEPTH} levels of objects and lists."
NOT_TEXT = ("The JSON holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text; "
            "send the text as UTF-8 or as a surrogate pair.")

_SURROGATE = re.compile("[\ud800-\udfff]")


class CheckedJSONParser(JSONParser):
    """``JSONParser`` that answers 400 (``ParseError``) for over-deep nesting and lone surrogates."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        check_parsed(data)
        return data


def check_parsed(data) -> None:
    """Raises ``ParseError`` when ``data`` nests deeper than ``MAX_DEPTH`` or holds a lone surrogate.

    Walks the value with a stack, not recursion, so its own depth is no risk."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise ParseError(NOT_TEXT)
        elif isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise ParseError(TOO_DEEP)
            items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
            for key, item in items:
                if key is not None:
                    stack.append((key, depth + 1))
                stack.append((item, depth + 1))
