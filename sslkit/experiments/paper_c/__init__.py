"""Paper C (Retrieve) experiments: the traditional-SSL trade-off of Figure 4 and Tables 5-10 (:mod:`.tradeoff`),
Retrieve's variants and extended runs (:mod:`.variants`), robust SSL of Figure 6 and Tables 11-13
(:mod:`.robust`), the experiments' descriptions (:mod:`.experiments`), the paper's claims (:mod:`.claims`) and
its scorecard rows (:mod:`.scorecard`)."""
