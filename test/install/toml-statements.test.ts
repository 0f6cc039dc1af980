import { describe, expect, it } from "vitest";
import { codexTables, tomlString } from "../../src/install/codex-config.js";
import { TomlReadError, tomlStatements } from "../../src/install/toml-statements.js";

/**
 * The statement scanner behind `install codex`: every header and key found with its full path
 * and exact extent, and nothing taken for a header that is inside a string or an array.
 */

const DOCUMENT = `# Codex settings
model = "gpt-5-codex"
approval_policy = 'on-request'   # a comment
notice.hide_full_access_warning = true
started = 1979-05-27 07:32:00Z
instructions = """
[mcp_servers.crm-insights]
a \\""" quote and a "" pair"""
literal = '''
[mcp_servers.fake]'''''

[ projects . "/home/me/work" ]
trust_level = "trusted"

[mcp_servers.github]
command = "npx"
args = [
  "-y", # the package follows
  [ "nested", "[mcp_servers.not-a-header]" ],
  "@modelcontextprotocol/server-github",
]
env = { GITHUB_TOKEN = "ghp_x", "quoted.key" = 'v' }

[mcp_servers."crm.prod"]
command = "node"

[[profiles.list]]
name = "a\\u00e9"
`;

describe("tomlStatements", () => {
  it("finds each statement with its full path, and no header inside strings or arrays", () => {
    const found = tomlStatements(DOCUMENT).map((s) => [s.kind, s.path.join(" / ")]);
    expect(found).toEqual([
      ["key", "model"],
      ["key", "approval_policy"],
      ["key", "notice / hide_full_access_warning"],
      ["key", "started"],
      ["key", "instructions"],
      ["key", "literal"],
      ["header", "projects / /home/me/work"],
      ["key", "projects / /home/me/work / trust_level"],
      ["header", "mcp_servers / github"],
      ["key", "mcp_servers / github / command"],
      ["key", "mcp_servers / github / args"],
      ["key", "mcp_servers / github / env"],
      ["header", "mcp_servers / crm.prod"],
      ["key", "mcp_servers / crm.prod / command"],
      ["array-header", "profiles / list"],
      ["key", "profiles / list / name"],
    ]);
  });

  it("a statement runs from its first character through its line ending", () => {
    const statements = tomlStatements(DOCUMENT);
    const text = (n: number) => {
      const s = statements[n];
      if (s === undefined) throw new Error(`no statement ${n}`);
      return DOCUMENT.slice(s.start, s.end);
    };
    expect(text(1)).toBe("approval_policy = 'on-request'   # a comment\n");
    expect(text(4)).toBe(
      'instructions = """\n[mcp_servers.crm-insights]\na \\""" quote and a "" pair"""\n',
    );
    expect(text(5)).toBe("literal = '''\n[mcp_servers.fake]'''''\n");
    expect(text(10)).toMatch(/^args = \[\n[\s\S]*\n\]\n$/);
    expect(text(15)).toBe('name = "a\\u00e9"\n');
  });

  it("reads Windows line endings and a last line without one", () => {
    const statements = tomlStatements('a = 1\r\n[t]\r\nb = "x"');
    expect(statements.map((s) => [s.path.join("."), s.start, s.end])).toEqual([
      ["a", 0, 7],
      ["t", 7, 12],
      ["t.b", 12, 19],
    ]);
  });

  it.each([
    ['a = "open\nb = 1\n', "line 1: a string is not closed on its line"],
    ["a = 1\nb = '''never closed\n", "line 2: a ''' string is not closed"],
    ["a = 1\n[t\nb = 2\n", 'line 2: expected "]"'],
    ["a = 1 2\n", "line 1: expected the end of the line"],
    ["a = [1, 2\nb = 3\n", 'line 2: expected "," or "]" in an array'],
    ["= 1\n", "line 1: expected a key"],
    ['a = "\\q"\n', "line 1: a bad escape"],
  ])("refuses what it cannot read, naming the line: %j", (text, message) => {
    expect(() => tomlStatements(text)).toThrow(new TomlReadError(message));
  });
});

describe("codexTables", () => {
  it("writes basic strings with quotes, backslashes and control characters escaped", () => {
    expect(tomlString('C:\\Program Files\\nodejs\\node.exe "x"\t\u0001')).toBe(
      '"C:\\\\Program Files\\\\nodejs\\\\node.exe \\"x\\"\\t\\u0001"',
    );
  });

  it("round-trips through the scanner: a quoted name, the env table, Windows line endings", () => {
    const text = codexTables(
      "crm.prod",
      {
        command: "C:\\nodejs\\node.exe",
        args: ["C:\\crm\\dist\\cli.js"],
        env: { CRM_BASE_URL: "https://api.example.com" },
      },
      "\r\n",
    );
    expect(text).toBe(
      [
        '[mcp_servers."crm.prod"]',
        'command = "C:\\\\nodejs\\\\node.exe"',
        'args = ["C:\\\\crm\\\\dist\\\\cli.js"]',
        "tool_timeout_sec = 120",
        "",
        '[mcp_servers."crm.prod".env]',
        'CRM_BASE_URL = "https://api.example.com"',
        "",
      ].join("\r\n"),
    );
    expect(tomlStatements(text).map((s) => s.path)).toEqual([
      ["mcp_servers", "crm.prod"],
      ["mcp_servers", "crm.prod", "command"],
      ["mcp_servers", "crm.prod", "args"],
      ["mcp_servers", "crm.prod", "tool_timeout_sec"],
      ["mcp_servers", "crm.prod", "env"],
      ["mcp_servers", "crm.prod", "env", "CRM_BASE_URL"],
    ]);
  });
});
