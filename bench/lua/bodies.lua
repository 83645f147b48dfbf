-- POSTs form bodies read from BODIES_FILE, one per line, each used once in turn
-- (pre-minted codes or refresh tokens are single-use).
local bodies = {}
local index = 0
for line in io.lines(os.getenv("BODIES_FILE")) do bodies[#bodies + 1] = line end

request = function()
  index = index + 1
  if index > #bodies then index = 1 end
  return wrk.format("POST", nil, {["Content-Type"] = "application/x-www-form-urlencoded"}, bodies[index])
end
