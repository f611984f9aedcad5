"""Paper B (RDSS) experiments: the selection experiments of Figures 2-3 and Table 4 (:mod:`.selection`), the
SSL runs of Table 1 (:mod:`.ssl`), the timings and defect checks of Table 5 (:mod:`.timing`), the experiments'
descriptions (:mod:`.experiments`), the paper's claims (:mod:`.claims`) and its scorecard rows
(:mod:`.scorecard`)."""
