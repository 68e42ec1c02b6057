-- Each agent's changes in real Neovim: two sessions (agents) change files; :Toolhost agents
-- lists them, `d` reviews one as a diff, and reverting all of one asks, then leaves the
-- other's changes as they are.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local toolhost = H.start({ policy = { mode = "bypass" } })
  H.stub_ui({ "Revert all of them" })
  local agents = require("toolhost.agents")

  local function as(session, name, args)
    local result = assert(toolhost.call_sync(name, args, nil, { session = session }))
    assert(result.isError == false, vim.inspect(result))
  end
  as("agent-a", "write_file", { path = "by-a.txt", content = "from A\n" })
  as("agent-b", "bash", { command = "echo 'from B' > by-b.txt" })
  as("agent-a", "bash", { command = "echo 'more from A' >> by-a.txt" })

  H.out.listed = agents.list()
  local listing = agents.show()
  H.out.listing = vim.api.nvim_buf_get_lines(listing, 0, -1, false)
  -- `d` on agent-a's line: the review of its changes.
  for number, line in ipairs(H.out.listing) do
    if line:find("session agent-a", 1, true) then
      vim.api.nvim_win_set_cursor(0, { number, 0 })
      break
    end
  end
  vim.api.nvim_feedkeys("d", "xt", false)
  H.wait(function()
    return agents.last_review ~= nil
  end, "the review")
  H.out.review = vim.api.nvim_buf_get_lines(0, 0, -1, false)

  local done, outcome = false, nil
  agents.revert_session("agent-a", function(result, err)
    done, outcome = true, result or err
  end)
  H.wait(function()
    return done
  end, "the revert of every call of agent-a")
  H.out.outcome = outcome
  H.out.prompt = H.out.prompts[#H.out.prompts]
  H.out.by_a = vim.uv.fs_stat(H.workspace .. "/by-a.txt") ~= nil
  H.out.by_b = H.read("by-b.txt")
end)
