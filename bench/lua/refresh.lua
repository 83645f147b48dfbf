-- Refresh-token rotation over K independent lineages. TOKENS_FILE holds one live refresh
-- token a line, each the head of its own grant; CLIENT_ID is the (public) client's id,
-- form-encoded. Every token is sent exactly once: a request takes the oldest token in the
-- queue, and the answer must carry a refresh token never seen before, which joins the
-- queue as that lineage's next token. Anything else (a refusal, an answer without a new
-- refresh token) ends the lineage and counts as a failure; a request with no token left
-- to send counts as starved. done() prints both: a run with either is not a valid figure.
-- WRK_THREADS (default 1) must equal wrk's -t: each thread takes its own share of the lines.

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "check.lua")

local client_id = os.getenv("CLIENT_ID")
local headers = {["Content-Type"] = "application/x-www-form-urlencoded"}
local queue, head, tail, seen = {}, 1, 0, {}

init = function(args)
  local share, n = tonumber(os.getenv("WRK_THREADS") or "1"), 0
  for line in io.lines(os.getenv("TOKENS_FILE")) do
    if line ~= "" then
      if n % share == thread_index then
        tail = tail + 1
        queue[tail] = line
        seen[line] = true
      end
      n = n + 1
    end
  end
end

request = function()
  local token = "starved"
  if head <= tail then
    token = queue[head]
    queue[head] = nil
    head = head + 1
  else
    starved = starved + 1
  end
  return wrk.format("POST", nil, headers,
    "grant_type=refresh_token&client_id=" .. client_id .. "&refresh_token=" .. token)
end

response = function(status, _, body)
  local token = status == 200 and body:match('"refresh_token"%s*:%s*"([^"]+)"')
  if token and not seen[token] then
    seen[token] = true
    ok = ok + 1
    tail = tail + 1
    queue[tail] = token
  else
    failures = failures + 1
  end
end

