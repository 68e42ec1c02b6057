-- :Toolhost tools: one line per tool (name, read-only or writes, its parameters; `?` marks
-- an optional one). <CR> on a line, or :Toolhost tools {name}, shows the tool's whole
-- description and each parameter with its type, bounds and default.
local M = {}

--- The parameter names of a tool: the required ones in the schema's order, then the
--- optional ones alphabetically; and which are required.
function M.parameters(tool)
  local schema = type(tool.inputSchema) == "table" and tool.inputSchema or {}
  local properties = type(schema.properties) == "table" and schema.properties or {}
  local required, names = {}, {}
  for _, name in ipairs(type(schema.required) == "table" and schema.required or {}) do
    required[name] = true
    table.insert(names, name)
  end
  local optional = vim.tbl_filter(function(name)
    return not required[name]
  end, vim.tbl_keys(properties))
  table.sort(optional)
  vim.list_extend(names, optional)
  return names, required, properties
end

function M.mark(tool)
  return tool.readOnly and "read-only" or "writes   "
end

--- One line: name, mark, parameter names (optional ones end with `?`).
function M.line(tool)
  local names, required = M.parameters(tool)
  local shown = vim.tbl_map(function(name)
    return required[name] and name or (name .. "?")
  end, names)
  return string.format("%-18s %s  %s", tool.name, M.mark(tool), table.concat(shown, ", "))
end

local function json(value)
  return vim.json.encode(value)
end

--- What a parameter takes, in words: type (or choices), bounds, default.
local function takes(property, is_required)
  local parts = {}
  if type(property.enum) == "table" then
    table.insert(parts, "one of " .. table.concat(vim.tbl_map(json, property.enum), ", "))
  elseif type(property.type) == "table" then
    table.insert(parts, table.concat(property.type, " or "))
  elseif property.type == "array" and type(property.items) == "table" and property.items.type then
    table.insert(parts, "array of " .. tostring(property.items.type))
  elseif property.type then
    table.insert(parts, tostring(property.type))
  end
  table.insert(parts, is_required and "required" or "optional")
  for _, bound in ipairs({ { "minimum", "at least" }, { "maximum", "at most" }, { "minLength", "min length" } }) do
    if type(property[bound[1]]) == "number" then
      table.insert(parts, bound[2] .. " " .. property[bound[1]])
    end
  end
  if property.default ~= nil and property.default ~= vim.NIL then
    table.insert(parts, "default " .. json(property.default))
  end
  return table.concat(parts, ", ")
end

--- The whole description and every parameter.
function M.details(tool)
  local lines = { string.format("%s  (%s)", tool.name, vim.trim(M.mark(tool))), "" }
  vim.list_extend(lines, vim.split(tool.description or "", "\n", { plain = true }))
  local names, required, properties = M.parameters(tool)
  table.insert(lines, "")
  table.insert(lines, #names > 0 and "Parameters:" or "No parameters.")
  for _, name in ipairs(names) do
    local property = type(properties[name]) == "table" and properties[name] or {}
    table.insert(lines, string.format("  %s (%s)", name, takes(property, required[name])))
    if type(property.description) == "string" and property.description ~= "" then
      table.insert(lines, "      " .. property.description)
    end
  end
  table.insert(lines, "")
  table.insert(lines, ":Toolhost tools  lists every tool")
  return lines
end

--- The header and one line per tool.
function M.listing(tools)
  local lines = { "<CR> on a tool (or :Toolhost tools {name}): its description and parameters", "" }
  for _, tool in ipairs(tools) do
    table.insert(lines, M.line(tool))
  end
  return lines
end

return M
