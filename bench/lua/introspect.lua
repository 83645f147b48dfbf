-- RFC 7662 introspection of one active access token by a confidential client: POSTs the
-- form body in BODY_FILE (token, client_id, client_secret) again and again. The answer must
-- be a 200 saying "active": true; anything else counts as a failure, printed by done().

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "check.lua")

local headers = {["Content-Type"] = "application/x-www-form-urlencoded"}
local file = io.open(os.getenv("BODY_FILE"))
local body = file:read("*l")
file:close()

request = function()
  return wrk.format("POST", nil, headers, body)
end

response = function(status, _, answer)
  if status == 200 and answer:find('"active"%s*:%s*true') then
    ok = ok + 1
  else
    failures = failures + 1
  end
end

