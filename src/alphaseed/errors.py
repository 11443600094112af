"""The package's own exception types.

Every failure a user can cause (a bad config, a broken download, a malformed file, an
infeasible warm start) surfaces as one of these, with a message that names the thing to fix,
so callers can catch ``AlphaseedError`` and never see a bare numpy or scipy traceback.
"""


class AlphaseedError(Exception):
    """Base class of every error raised on purpose by alphaseed."""


class ConfigError(AlphaseedError, ValueError):
    """The configuration is invalid; the message names the offending key."""


class DatasetError(AlphaseedError):
    """A dataset could not be fetched, parsed or verified."""


class DownloadError(DatasetError):
    """Fetching a dataset failed (network, HTTP status, time-out, truncated transfer)."""


class MalformedFileError(DatasetError, ValueError):
    """A LibSVM-format file does not parse; the message names the file and, if known, the line."""


class VerificationError(DatasetError):
    """A parsed dataset does not match its expected counts or fingerprint."""


class SolverInputError(AlphaseedError, ValueError):
    """Arguments to the solver are invalid (labels, C, gamma, an infeasible warm start)."""


class SeedingError(AlphaseedError):
    """A seeder was called with inconsistent index sets."""
