-- a page 90% deep (the cursor was taken while paging there)
SELECT worklist.list_durable_runs(lim => 100, cursor => :cursor);
