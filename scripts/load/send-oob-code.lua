-- wrk script for POST /v1/accounts:sendOobCode as the admin, with returnOobLink (no mail is sent).
--
-- Arguments (after `--` on the wrk command line):
--   1. requestType: EMAIL_SIGNIN (default) or PASSWORD_RESET
--   2. how many addresses each wrk thread cycles through (default 5000)
--   3. the address prefix (default load): addresses are <prefix>-<n>@example.com
--
-- Every address is asked for again and again, so each request after the first round also retires
-- the address's previous live code, as the server does for a real person asking twice.
-- EMAIL_SIGNIN needs no accounts (sign-up is on in the shipped config) and carries a continue URL
-- that goes through the allow-list. PASSWORD_RESET needs the accounts to exist: with it, the
-- threads share one pool of <count> addresses <prefix>-0 ... <prefix>-<count-1>, which
-- scripts/load-test.sh creates first.

local next_thread = 0

function setup(thread)
   thread:set("thread_id", next_thread)
   next_thread = next_thread + 1
end

function init(args)
   request_type = args[1] or "EMAIL_SIGNIN"
   pool = tonumber(args[2] or "5000")
   prefix = args[3] or "load"
   counter = 0
   headers = {
      ["Content-Type"] = "application/json",
      ["Authorization"] = "Bearer owner",
   }
   if request_type == "EMAIL_SIGNIN" then
      -- Each thread has its own addresses; a code is issued for a new address or retires the last one.
      template = '{"requestType":"EMAIL_SIGNIN","email":"' .. prefix .. '-' .. thread_id
         .. '-%d@example.com","continueUrl":"https://app.example.com/","returnOobLink":true}'
      counter = 0
   else
      -- The threads share the pre-created accounts; start each thread at a different place.
      template = '{"requestType":"' .. request_type .. '","email":"' .. prefix
         .. '-%d@example.com","returnOobLink":true}'
      counter = thread_id * 7919
   end
end

function request()
   counter = counter + 1
   local body = string.format(template, counter % pool)
   return wrk.format("POST", "/v1/accounts:sendOobCode", headers, body)
end
