-- Waiting for a callback-style UI (vim.ui.select, vim.ui.input) inside an LSP request
-- handler, whose answer Neovim sends as soon as the handler returns.
--
-- Neovim 0.10+ runs server->client request handlers inside a coroutine
-- (vim/lsp/rpc.lua: vim.schedule(coroutine.wrap(...))), and LuaJIT can yield across the
-- pcall around them: the handler yields and the picker's callback resumes it, so the
-- editor stays responsive while the user decides. Where no yieldable coroutine is running
-- (Neovim 0.9, or a plain call) it falls back to vim.wait, which keeps processing events.
local M = {}

--- Run `start(done)` and return the value passed to `done`.
--- @param start fun(done: fun(value: any))
--- @param timeout_ms integer? only for the vim.wait fallback
--- @return any
function M.await(start, timeout_ms)
  local co = coroutine.running()
  local finished, value, suspended = false, nil, false
  local function done(v)
    if finished then
      return
    end
    finished, value = true, v
    if suspended then
      suspended = false
      local ok, err = coroutine.resume(co, v)
      if not ok then
        vim.notify("toolhost: " .. tostring(err), vim.log.levels.ERROR)
      end
    end
  end
  if co and coroutine.isyieldable() then
    start(done)
    if finished then -- the UI answered synchronously (default select uses inputlist)
      return value
    end
    suspended = true
    return coroutine.yield()
  end
  start(done)
  vim.wait(timeout_ms or 300000, function()
    return finished
  end, 20)
  return value
end

--- vim.ui.select as a function that returns the choice.
function M.select(items, opts)
  return M.await(function(done)
    vim.ui.select(items, opts, function(choice)
      done(choice)
    end)
  end)
end

--- vim.ui.input as a function that returns the text (nil when cancelled).
function M.input(opts)
  return M.await(function(done)
    vim.ui.input(opts, function(text)
      done(text)
    end)
  end)
end

return M
