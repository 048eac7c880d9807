"""The one error type the command line turns into a one-line message and exit status 2."""


class WinohdlError(ValueError):
    """Bad input or a failed check, explained in one line for the user.

    Every package raises this (or a subclass) for problems the user can fix:
    an impossible geometry, a malformed card, an unsupported width, a missing
    simulator. The CLI prints ``error: <message>`` and exits with status 2.
    """
