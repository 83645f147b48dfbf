-- GETs a page as a signed-in browser: the Cookie header from COOKIE. The answer must be a
-- 200 carrying MUST_HAVE (a piece of the page's text); anything else counts as a failure.

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "check.lua")

local headers = {["Cookie"] = os.getenv("COOKIE")}
local must_have = os.getenv("MUST_HAVE") or ""

request = function()
  return wrk.format("GET", nil, headers)
end

response = function(status, _, body)
  if status == 200 and string.find(body, must_have, 1, true) then
    ok = ok + 1
  else
    failures = failures + 1
  end
end
