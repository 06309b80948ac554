-- wrk script: issues sign-in links (POST /v1/accounts:sendOobCode as the admin, returnOobLink) to
-- a new address each time, and records every acknowledged "email code" pair, for confirm.lua.
--
-- Arguments (after `--`): 1. a file prefix: thread N appends its pairs to <prefix>-<tag>-<N>.txt
--                         2. a tag that keeps the addresses of separate wrk runs apart
local next_thread = 0

function setup(thread)
   thread:set("thread_id", next_thread)
   next_thread = next_thread + 1
end

function init(args)
   local prefix = args[1] or "/tmp/codes"
   tag = args[2] or "a"
   out = io.open(prefix .. "-" .. tag .. "-" .. thread_id .. ".txt", "w")
   counter = 0
   headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer owner" }
end

function request()
   counter = counter + 1
   local body = string.format(
      '{"requestType":"EMAIL_SIGNIN","email":"bench-%s-%d-%d@example.com","continueUrl":"https://app.example.com/","returnOobLink":true}',
      tag, thread_id, counter)
   return wrk.format("POST", "/v1/accounts:sendOobCode", headers, body)
end

function response(status, headers, body)
   if status == 200 then
      local code = body:match('"oobCode":"([^"]+)"')
      local email = body:match('"email":"([^"]+)"')
      if code and email then out:write(email, " ", code, "\n") end
   end
end

function done(summary, latency, requests)
   -- Threads' files are closed when wrk exits.
end
