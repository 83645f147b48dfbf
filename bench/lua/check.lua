-- What every checking script shares, loaded with dofile by each: the threads registered
-- in setup (each told its index, for scripts that split an input file between threads),
-- and done(), which adds up every thread's counters and prints the one line the harness
-- reads: `bench-check failures=F starved=S ok=O`. A script counts in three globals:
-- failures (a wrong answer), starved (a request with no single-use input left) and ok.

local threads = {}
failures, starved, ok = 0, 0, 0

setup = function(thread)
  thread:set("thread_index", #threads)
  threads[#threads + 1] = thread
end

done = function()
  local total = {failures = 0, starved = 0, ok = 0}
  for _, thread in ipairs(threads) do
    for name in pairs(total) do total[name] = total[name] + thread:get(name) end
  end
  io.write(string.format("bench-check failures=%d starved=%d ok=%d\n", total.failures, total.starved, total.ok))
end
