"""Making and keeping records, for any paper: what an experiment is (:mod:`.experiment`), the results store
(:mod:`.store`: one JSON line per run, its key and fields), the grid runner (:mod:`.runner`), the Ray and Slurm
executors (:mod:`.executors`), replays of committed records (:mod:`.replay`) and the hardware and platform a
record was made on (:mod:`.hardware`)."""
