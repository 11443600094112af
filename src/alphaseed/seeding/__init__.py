"""Alpha seeding: initial alphas for round h+1 of k-fold CV from round h's optimum.

Every seeder takes a ``SeedContext`` and returns alpha' aligned with ``ctx.next_index`` that is
feasible (0 <= alpha' <= C, sum y alpha' = 0) before SMO runs. ATO, MIR and SIR are the paper's
(Wen et al. 2017, Section 3); AVG and TOP are the leave-one-out seeders it compares with.
FULL (not in the paper) seeds every k-fold round from one model trained on all instances, as
AVG and TOP do at leave-one-out; FROM_FULL_MODEL names the seeders that need that model.
"""

from .adjust import adjust_alpha, water_fill
from .ato import ato_memory_bytes, seed_ato
from .avg import seed_avg
from .context import SeedContext, seed_context
from .full import seed_full
from .mir import seed_mir
from .sir import seed_sir
from .top import seed_top

SEEDERS = {"ato": seed_ato, "mir": seed_mir, "sir": seed_sir, "avg": seed_avg, "top": seed_top,
           "full": seed_full}
LOO_ONLY = frozenset({"avg", "top"})
FROM_FULL_MODEL = LOO_ONLY | {"full"}

# The public API; ato_memory_bytes is imported from here by the pipeline's memory plan but not part of it.
__all__ = ["SEEDERS", "LOO_ONLY", "FROM_FULL_MODEL", "SeedContext", "seed_context", "adjust_alpha",
           "water_fill",
           "seed_ato", "seed_avg", "seed_full", "seed_mir", "seed_sir", "seed_top"]
