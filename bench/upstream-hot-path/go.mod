module meshsync.invalid/bench/upstream-hot-path

go 1.19
