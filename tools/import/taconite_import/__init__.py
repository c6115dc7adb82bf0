"""taconite-import: trained AdaFace / IR-family face recognisers -> taconite bundles (spec bundle.md §9)."""


class UnsupportedModel(Exception):
    """The input cannot become a bundle; the message names the layer, key or file and what is wrong."""
