"""What the book reports, for any paper: the one verdict rule (:mod:`.stats`), mean ± std tables beside a paper's
numbers (:mod:`.tables`), the claims ledger (:mod:`.ledger`) and the scorecard (:mod:`.scorecard`). Nothing here
knows a paper: the per-paper claims and scorecard rows live beside each paper's protocol (``paper_a`` ...)."""
