"""The package's own exception types.

Every failure a user can cause (a bad config, a broken download, a malformed file, an
infeasible warm start) surfaces as one of these, with a message that names the thing to fix,
so callers can catch ``AlphaseedError`` and never see a bare numpy or scipy traceback.
"""


class AlphaseedError(Exception):
    """Base class of every error alphaseed raises on purpose: catch it to handle any failure a user can fix."""


class ConfigError(AlphaseedError, ValueError):
    """Raised when the configuration is invalid; the message names the offending key."""


class DatasetError(AlphaseedError):
    """Raised when a dataset cannot be fetched, parsed or verified (the base of the three below)."""


class DownloadError(DatasetError):
    """Raised when fetching a dataset fails (network, HTTP status, time-out, truncated transfer)."""


class MalformedFileError(DatasetError, ValueError):
    """Raised when a LibSVM-format file does not parse; the message names the file and, if known, the line."""


class VerificationError(DatasetError):
    """Raised when a parsed dataset does not match its expected counts or fingerprint."""


class SolverInputError(AlphaseedError, ValueError):
    """Raised when arguments to the solver or the folds are invalid (labels, C, gamma, k, seed, index sets,
    an infeasible warm start)."""


class SeedingError(AlphaseedError):
    """Raised when a seeder is called with inconsistent index sets."""
