"""How many negative controls PASS under each variant of the verdict-path ablation.

    nice -n 10 .venv/bin/python docs/bench/verdict_ablation_controls.py

The variants are ``bench_verification --ablation``'s (:func:`ablation_variants` of the
product's offline configuration, :func:`default_config`, shipped models, not the fold
models: no control is a SciFact claim). Each control is scored exactly as
``tests/verify/test_negative_controls.py`` scores a family set (its ``_passing``: the
claim against its one passage); none should PASS. Prints one line per variant: the
number passing and their ids. A predicate whose removal lets a control PASS has a
measured reason to stay even where SciFact's macro-F1 does not move
(docs/bench/verdict_ablation.md).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from research.bench.verification import ablation_variants
    from research.pipeline.verify import default_config
    from tests.verify.test_negative_controls import CONTROLS, KNOWN_PASSES, _passing

    started = time.perf_counter()
    print(f"controls: {len(CONTROLS)}; known to pass today: {sorted(KNOWN_PASSES)}")
    print("variant | passing | ids")
    for name, config in ablation_variants(default_config()).items():
        ids = [row["id"] for row in _passing(config)]
        print(f"{name} | {len(ids)} | {' '.join(map(str, ids)) or '-'}")
    print(f"seconds: {time.perf_counter() - started:.0f}")


if __name__ == "__main__":
    main()
