"""Alpha seeding: initial alphas for round h+1 of k-fold CV from round h's optimum.

Every seeder takes a ``SeedContext`` and returns alpha' aligned with ``ctx.next_index`` that is
feasible (0 <= alpha' <= C, sum y alpha' = 0) before SMO runs. ATO, MIR and SIR are the paper's
(Wen et al. 2017, Section 3); AVG and TOP are the leave-one-out seeders it compares with.
"""

from .adjust import adjust_alpha, water_fill
from .ato import seed_ato
from .avg import seed_avg
from .base import SeedContext
from .mir import seed_mir
from .sir import seed_sir
from .top import seed_top

SEEDERS = {"ato": seed_ato, "mir": seed_mir, "sir": seed_sir, "avg": seed_avg, "top": seed_top}
LOO_ONLY = frozenset({"avg", "top"})

__all__ = ["SEEDERS", "LOO_ONLY", "SeedContext", "adjust_alpha", "water_fill",
           "seed_ato", "seed_avg", "seed_mir", "seed_sir", "seed_top"]
