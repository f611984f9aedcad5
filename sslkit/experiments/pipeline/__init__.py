"""All three papers together (issue 24): RDSS chooses the labels (B), the risk rewrite or FreeMatch learns (A),
Retrieve chooses the unlabeled data (C), through :class:`sslkit.pipeline.SSLPipeline`. The task and the run
(:mod:`.runs`), the experiment's description (:mod:`.experiments`) and the chapter's claims (:mod:`.claims`)."""
