"""The library's errors about network files, in one small module every layer may import.

``CheckpointError`` is any network file that cannot be used, with the reason in words;
the site shows that reason to whoever uploaded the file.
"""


class CheckpointError(ValueError):
    """A checkpoint or network file that cannot be used, with the reason."""


class NetworkTooLarge(CheckpointError):
    """A network file that unpacks to, or declares, more bytes than the reader will hold.

    Raised while the file streams in, before the bytes are kept, so a small compressed
    file cannot make the reader allocate what it declares.
    """
