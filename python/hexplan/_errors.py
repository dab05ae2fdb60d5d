"""The exceptions hexplan raises: the CLI's error message and its kind (exit code)."""


class HexplanError(Exception):
    """An error reported by a hexplan command.

    ``message`` is the CLI's message (what ``hexplan`` prints after ``hexplan: error:``) and
    ``exit_code`` the code the CLI would exit with.
    """

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class InputError(HexplanError, ValueError):
    """Bad input the user can fix (a bad file, an unknown name, an out-of-range option, an
    infeasible request): what the CLI exits 2 on."""


class InternalError(HexplanError, RuntimeError):
    """hexplan's own bug: what the CLI exits 1 on."""


def raise_for(code: int, message: str) -> None:
    """Raises the exception for a CLI exit code (nothing for 0)."""
    if code == 0:
        return
    if code == 130:
        raise KeyboardInterrupt(message or "hexplan: interrupted")
    if code == 2:
        raise InputError(message, code)
    if code == 1:
        raise InternalError(message, code)
    raise HexplanError(message, code)
