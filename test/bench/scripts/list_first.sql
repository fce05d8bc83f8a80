-- the first page of list_durable_runs
SELECT worklist.list_durable_runs(lim => 100);
