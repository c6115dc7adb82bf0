"""taconite-import: trained AdaFace / IR-family face recognisers -> taconite bundles (spec bundle.md §9)."""


class UnsupportedModel(Exception):
    """The input cannot become a bundle; the message names the layer, key or file and what is wrong."""


def one_line(e):
    """An exception as 'Type: first line of its message', for the tool's one-line errors."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else 'no detail'}"
