-- GETs with the bearer token in ACCESS_TOKEN (empty: anonymous).
local token = os.getenv("ACCESS_TOKEN") or ""
request = function()
  local headers = {}
  if token ~= "" then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("GET", nil, headers)
end
