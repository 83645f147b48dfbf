-- POSTs form bodies read from BODIES_FILE (one a line: pre-minted authorization codes),
-- each sent exactly once, never wrapped around. The answer must be a 200 carrying an
-- access token and a refresh token; anything else counts as a failure. When the bodies
-- run out, further requests count as starved (mint more). done() prints both: a run with
-- either is not a valid figure. WRK_THREADS (default 1) must equal wrk's -t.

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "check.lua")

local headers = {["Content-Type"] = "application/x-www-form-urlencoded"}
local bodies, index = {}, 0

init = function(args)
  local share, n = tonumber(os.getenv("WRK_THREADS") or "1"), 0
  for line in io.lines(os.getenv("BODIES_FILE")) do
    if line ~= "" then
      if n % share == thread_index then bodies[#bodies + 1] = line end
      n = n + 1
    end
  end
end

request = function()
  index = index + 1
  if index > #bodies then
    starved = starved + 1
    return wrk.format("POST", nil, headers, "grant_type=authorization_code&code=starved")
  end
  local body = bodies[index]
  bodies[index] = nil
  return wrk.format("POST", nil, headers, body)
end

response = function(status, _, body)
  if status == 200 and body:find('"access_token"', 1, true) and body:find('"refresh_token"', 1, true) then
    ok = ok + 1
  else
    failures = failures + 1
  end
end

