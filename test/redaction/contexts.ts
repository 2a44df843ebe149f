/**
 * The places a secret turns up in what an agent's tools see: every assignment shape, CLI flags,
 * HTTP headers, URLs, connection strings, prose and logs. A context turns (name, secret) into
 * text; `keep` lists what must survive redaction beside the secret (the name, a host), so a
 * redactor that wipes the whole line does not score as precise.
 */
import { b64, pick, type Rng } from "./rng.js";

export interface Placed {
  /** The text (or, for `value`, a structured value) as a tool would see it. */
  text?: string;
  value?: unknown;
  /** The secret as it appears in the text (it differs when the context encodes it). */
  planted: string;
  keep: string[];
  /** A file's whole content (a `.env` file): no ordinary line is placed before and after it. */
  whole?: boolean;
}

export interface Context {
  id: string;
  /** What the context can hold: `any` secret, only `named` ones (the name is in the text), or only `bare` single-line URL-safe ones. */
  needs: "named" | "distinct" | "urlsafe" | "block";
  /** Formats (provider ids) the context cannot hold as written. */
  skip?: readonly string[];
  place: (name: string, secret: string, r: Rng) => Placed;
}

const lower = (n: string) => n.toLowerCase();
const camel = (n: string) => lower(n).replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const kebab = (n: string) => lower(n).replace(/_/g, "-");
const t = (text: string, planted: string, ...keep: string[]): Placed => ({ text, planted, keep });

const HOSTS = ["db.internal", "10.0.3.17", "pg-prod.example.com", "localhost", "cache-01.svc.cluster.local"];
const USERS = ["app", "admin", "deploy", "postgres", "svc_reporting"];

/** Contexts where the secret sits beside its name. */
const NAMED: Context[] = [
  { id: "dotenv", needs: "named", place: (n, s) => t(`${n}=${s}`, s, n) },
  { id: "dotenv-quoted", needs: "named", place: (n, s) => t(`${n}="${s}"`, s, n) },
  { id: "export", needs: "named", place: (n, s) => t(`export ${n}=${s}`, s, `export ${n}`) },
  { id: "export-single-quoted", needs: "named", place: (n, s) => t(`export ${n}='${s}'`, s, `export ${n}`) },
  { id: "shell-prefix", needs: "named", place: (n, s) => t(`${n}='${s}' npm run deploy -- --env prod`, s, "npm run deploy") },
  { id: "dockerfile-env", needs: "named", place: (n, s) => t(`FROM node:20-alpine\nENV ${n}=${s}\nRUN npm ci`, s, "RUN npm ci", n) },
  { id: "docker-run", needs: "named", place: (n, s) => t(`docker run --rm -e ${n}=${s} -p 8080:8080 app:1.4.2`, s, "app:1.4.2") },
  { id: "yaml", needs: "named", place: (n, s) => t(`${lower(n)}: ${s}`, s, lower(n)) },
  { id: "yaml-quoted", needs: "named", place: (n, s) => t(`${lower(n)}: "${s}"`, s, lower(n)) },
  {
    id: "yaml-block",
    needs: "named",
    place: (n, s) =>
      t(`services:\n  api:\n    image: api:2.3.1\n    environment:\n      ${n}: ${s}\n      LOG_LEVEL: info`, s, "LOG_LEVEL: info", n),
  },
  {
    id: "yaml-list-env",
    needs: "named",
    place: (n, s) => t(`env:\n  - name: ${n}\n    value: "${s}"\n  - name: PORT\n    value: "8080"`, s, "PORT"),
  },
  { id: "yaml-flow", needs: "named", place: (n, s) => t(`credentials: {region: eu-west-1, ${camel(n)}: ${s}}`, s, "eu-west-1", camel(n)) },
  { id: "json", needs: "named", place: (n, s) => t(`{"${camel(n)}": "${s}", "region": "us-east-1"}`, s, "us-east-1", camel(n)) },
  { id: "json-compact", needs: "named", place: (n, s) => t(`{"${n}":"${s}","debug":false}`, s, '"debug":false') },
  { id: "json-escaped", needs: "named", place: (n, s) => t(`{"body":"{\\"${lower(n)}\\":\\"${s}\\",\\"id\\":7}"}`, s, '\\"id\\":7') },
  { id: "toml", needs: "named", place: (n, s) => t(`[service]\nname = "billing"\n${lower(n)} = "${s}"`, s, 'name = "billing"', lower(n)) },
  { id: "ini", needs: "named", place: (n, s) => t(`[default]\nregion=eu-central-1\n${lower(n)}=${s}`, s, "region=eu-central-1") },
  { id: "ini-spaced", needs: "named", place: (n, s) => t(`[profile ci]\n${lower(n)} = ${s}`, s, "[profile ci]") },
  { id: "properties", needs: "named", place: (n, s) => t(`app.${camel(n)}=${s}\nserver.port=8080`, s, "server.port=8080") },
  {
    id: "go-walrus",
    needs: "named",
    place: (n, s) => t(`\t${camel(n)} := "${s}"\n\tclient := api.New(${camel(n)})`, s, "client := api.New"),
  },
  { id: "bnf-assign", needs: "named", place: (n, s) => t(`${n} ::= ${s}`, s, n) },
  { id: "make-conditional", needs: "named", place: (n, s) => t(`${n} ?= ${s}\nbuild:\n\tgo build ./...`, s, "go build") },
  { id: "make-immediate", needs: "named", place: (n, s) => t(`${n} := ${s}`, s, n) },
  { id: "php-append", needs: "named", place: (n, s) => t(`$${camel(n)} .= '${s}';`, s, camel(n)) },
  { id: "php-array", needs: "named", place: (n, s) => t(`return ['${lower(n)}' => '${s}', 'timeout' => 30];`, s, "'timeout' => 30") },
  { id: "ruby-hash", needs: "named", place: (n, s) => t(`config = { :${lower(n)} => "${s}", :retries => 3 }`, s, ":retries => 3") },
  { id: "ruby-env", needs: "named", place: (n, s) => t(`ENV["${n}"] = "${s}"`, s, n) },
  { id: "python-environ", needs: "named", place: (n, s) => t(`os.environ["${n}"] = "${s}"`, s, "os.environ") },
  { id: "python-kwarg", needs: "named", place: (n, s) => t(`client = Client(${lower(n)}="${s}", timeout=30)`, s, "timeout=30") },
  { id: "js-const", needs: "named", place: (n, s) => t(`const ${camel(n)} = "${s}";`, s, `const ${camel(n)}`) },
  { id: "js-process-env", needs: "named", place: (n, s) => t(`process.env.${n} = '${s}';`, s, "process.env") },
  { id: "js-object", needs: "named", place: (n, s) => t(`new Client({ ${camel(n)}: '${s}', retries: 2 })`, s, "retries: 2") },
  { id: "java-setproperty", needs: "named", place: (n, s) => t(`System.setProperty("${lower(n)}", "${s}");`, s, "System.setProperty") },
  { id: "call-setenv", needs: "named", place: (n, s) => t(`os.Setenv("${n}", "${s}")`, s, "os.Setenv") },
  { id: "csharp-config", needs: "named", place: (n, s) => t(`config["${n}"] = "${s}";`, s, "config[") },
  {
    id: "terraform",
    needs: "named",
    place: (n, s) => t(`variable "x" {}\nresource "k" "a" {\n  ${lower(n)} = "${s}"\n}`, s, 'variable "x"'),
  },
  {
    id: "xml-element",
    needs: "named",
    place: (n, s) => t(`<config><${camel(n)}>${s}</${camel(n)}><port>8080</port></config>`, s, "<port>8080</port>"),
  },
  { id: "xml-attribute", needs: "named", place: (n, s) => t(`<credentials ${camel(n)}="${s}" user="ci"/>`, s, 'user="ci"') },
  { id: "xml-add-key", needs: "named", place: (n, s) => t(`<add key="${n}" value="${s}" />`, s, `key="${n}"`) },
  { id: "k8s-secret", needs: "named", place: (n, s) => t(`kind: Secret\nstringData:\n  ${kebab(n)}: "${s}"`, s, "kind: Secret") },
  { id: "gha-env", needs: "named", place: (n, s) => t(`    env:\n      ${n}: ${s}\n    run: ./deploy.sh`, s, "./deploy.sh") },
  { id: "cli-flag-equals", needs: "named", place: (n, s) => t(`deploy --${kebab(n)}=${s} --region us-east-1`, s, "--region us-east-1") },
  { id: "cli-flag-space", needs: "named", place: (n, s) => t(`tool login --${kebab(n)} ${s} --verbose`, s, "--verbose") },
  { id: "digit-key", needs: "named", place: (n, s) => t(`1password_token: ${s}\n2fa_${lower(n)}=${s}`, s, "1password_token") },
  {
    id: "header-custom",
    needs: "named",
    place: (n, s) => t(`curl -H "X-${kebab(n)}: ${s}" https://api.example.com/v1/items`, s, "https://api.example.com/v1/items"),
  },
  { id: "prose-named", needs: "named", place: (n, s) => t(`Set ${n} to ${s} before running the tests.`, s, "before running the tests") },
  {
    id: "log-kv",
    needs: "named",
    place: (n, s) => t(`2025-03-02T10:11:12Z level=debug msg="loaded config" ${lower(n)}=${s} pid=4242`, s, "pid=4242"),
  },
];

/** Contexts that hold any secret of a recognisable format, with or without a name. */
/**
 * Shapes a second reading found leaking (test/redaction/fixtures.ts pins one case of each): quoted
 * keys in Python and Django, name/value JSON (ECS, CloudFormation, `kubectl -o json`), setters,
 * Rust and Go string forms, YAML block scalars, unquoted values with spaces.
 */
const NAMED_MORE: Context[] = [
  { id: "python-dict", needs: "named", place: (n, s) => t(`{'user': 'bob', '${lower(n)}': '${s}', 'port': 5432}`, s, "'port': 5432") },
  {
    id: "django-settings",
    needs: "named",
    place: (n, s) => t(`DATABASES = {'default': {'ENGINE': 'django.db.backends.postgresql', '${n}': '${s}'}}`, s, "django.db.backends"),
  },
  {
    id: "ecs-json",
    needs: "named",
    place: (n, s) => t(`"environment": [{"name": "${n}", "value": "${s}"}, {"name": "PORT", "value": "80"}]`, s, '"PORT"'),
  },
  {
    id: "setter",
    needs: "named",
    place: (n, s) =>
      t(
        `ds.set${camel(`X_${n}`).slice(1)}("${s}");
ds.setPort(5432);`,
        s,
        "ds.setPort(5432)",
      ),
  },
  {
    id: "rust-string-from",
    needs: "named",
    place: (n, s) => t(`let cfg = Config { ${lower(n)}: String::from("${s}"), port: 80 };`, s, "port: 80"),
  },
  { id: "go-backtick", needs: "named", place: (n, s) => t(`${camel(n)} := \`${s}\`\nport := 8080`, s, "port := 8080") },
  { id: "rust-raw", needs: "named", place: (n, s) => t(`let ${lower(n)} = r#"${s}"#;\nlet port = 80;`, s, "let port = 80;") },
  {
    id: "yaml-block-scalar",
    needs: "named",
    place: (n, s) => t(`db:\n  ${lower(n)}: |\n    ${s}\n  host: db.internal`, s, "host: db.internal"),
  },
];

/**
 * Shapes two held-out corpora found leaking (issue 32): a value on its own line inside an XML
 * element, typed declarations, Make's `:::=`, and a dotenv file's values whatever their names.
 */
const HELD_OUT: Context[] = [
  {
    id: "xml-element-lines",
    needs: "named",
    place: (n, s) => t(`<config>\n  <${camel(n)}>\n    ${s}\n  </${camel(n)}>\n  <port>8080</port>\n</config>`, s, "<port>8080</port>"),
  },
  { id: "go-typed", needs: "named", place: (n, s) => t(`var ${camel(n)} string = "${s}"\nvar port int = 8080`, s, "var port int = 8080") },
  { id: "ts-typed", needs: "named", place: (n, s) => t(`let ${camel(n)}: string = "${s}";\nlet port = 80;`, s, "let port = 80;") },
  { id: "kotlin-typed", needs: "named", place: (n, s) => t(`val ${camel(n)}: String = "${s}"`, s, `val ${camel(n)}: String`) },
  { id: "rust-typed", needs: "named", place: (n, s) => t(`let ${lower(n)}: &str = "${s}";`, s, `let ${lower(n)}: &str`) },
  { id: "python-typed", needs: "named", place: (n, s) => t(`${lower(n)}: str = "${s}"\ntimeout: int = 30`, s, "timeout: int = 30") },
  {
    id: "java-field",
    needs: "named",
    place: (n, s) => t(`private static final String ${n} = "${s}";\nprivate int port = 8080;`, s, "private int port = 8080;"),
  },
  { id: "make-escaped", needs: "named", place: (n, s) => t(`${n} :::= ${s}\nbuild:\n\tgo build ./...`, s, "go build") },
  { id: "make-escaped-quoted", needs: "named", place: (n, s) => t(`${n} :::= "${s}"`, s, n) },
  {
    id: "dotenv-file",
    needs: "named",
    place: (_n, s) => ({
      ...t(
        `# .env.production\nAPP_NAME=billing\nPORT=8080\nSERVICE_VALUE=${/\s/.test(s) ? `"${s}"` : s}\nLOG_LEVEL=info\nDEBUG=false\nPUBLIC_URL=https://app.example.com`,
        s,
        "APP_NAME=billing\nPORT=8080\nSERVICE_VALUE=",
        "LOG_LEVEL=info\nDEBUG=false\nPUBLIC_URL=https://app.example.com",
      ),
      whole: true,
    }),
  },
  {
    id: "url-path",
    needs: "distinct",
    // A bare secret key's `/` would read as the path's own (no rule can tell them apart; such a key is percent-encoded in a URL).
    skip: ["aws-secret-key-bare"],
    place: (_n, s) => t(`curl -X POST https://api.example.com/hooks/${s}/notify -d @body.json`, s, "https://api.example.com/hooks/"),
  },
];

/** URL-encoded placements: a token inside an encoded redirect or a JSON body sent as a form value. */
const ENCODED: Context[] = [
  {
    id: "url-encoded-query",
    needs: "urlsafe",
    place: (_n, s) => t(`GET /login?next=%2Fapi%2Fv1%3Ftoken%3D${s}%26page%3D2 302`, s, "GET /login"),
  },
  {
    id: "url-encoded-json",
    needs: "named",
    place: (n, s) =>
      t(`payload=%7B%22${camel(n)}%22%3A%22${encodeURIComponent(s)}%22%2C%22id%22%3A7%7D`, encodeURIComponent(s), "payload="),
  },
];

const DISTINCT: Context[] = [
  { id: "bare", needs: "distinct", place: (_n, s) => t(s, s) },
  {
    id: "log-line",
    needs: "distinct",
    place: (_n, s) => t(`[2025-03-02 10:11:12] INFO uploading with ${s} (attempt 2/5)`, s, "(attempt 2/5)"),
  },
  {
    id: "error-text",
    needs: "distinct",
    place: (_n, s) =>
      t(`Error: request failed with 401 for credential ${s}\n    at fetch (/app/src/client.ts:42:11)`, s, "/app/src/client.ts:42:11"),
  },
  {
    id: "prose",
    needs: "distinct",
    place: (_n, s) => t(`here is the key you asked for: ${s} - rotate it after the demo`, s, "rotate it after the demo"),
  },
  { id: "markdown-code", needs: "distinct", place: (_n, s) => t(`Use this:\n\n\`\`\`\n${s}\n\`\`\`\n`, s, "Use this:") },
  { id: "json-array", needs: "distinct", place: (_n, s) => t(`["build", "${s}", "--verbose"]`, s, '"--verbose"') },
  { id: "generic-name", needs: "distinct", place: (_n, s) => t(`value: ${s}`, s, "value:") },
  { id: "bearer", needs: "distinct", place: (_n, s) => t(`Authorization: Bearer ${s}`, s, "Authorization") },
  {
    id: "curl-header",
    needs: "distinct",
    place: (_n, s) => t(`curl -sS -H 'Authorization: token ${s}' https://api.github.com/user`, s, "https://api.github.com/user"),
  },
];

/** Contexts for secrets that fit in a URL or a command line unescaped. */
const URLSAFE: Context[] = [
  { id: "x-api-key", needs: "urlsafe", place: (_n, s) => t(`X-Api-Key: ${s}\nAccept: application/json`, s, "Accept: application/json") },
  { id: "cookie", needs: "urlsafe", place: (_n, s) => t(`Cookie: theme=dark; session=${s}; lang=en`, s, "Cookie") },
  { id: "set-cookie", needs: "urlsafe", place: (_n, s) => t(`Set-Cookie: sid=${s}; Path=/; HttpOnly; Secure`, s, "Set-Cookie") },
  {
    id: "url-userinfo",
    needs: "urlsafe",
    place: (_n, s, r) => t(`git clone https://${pick(r, USERS)}:${s}@gitlab.com/acme/api.git`, s, "gitlab.com/acme/api.git"),
  },
  {
    id: "url-query",
    needs: "urlsafe",
    place: (_n, s) => t(`GET https://api.example.com/v2/report?format=csv&api_key=${s}&page=2`, s, "format=csv"),
  },
  {
    id: "url-query-token",
    needs: "urlsafe",
    place: (_n, s) => t(`wss://stream.example.com/socket?token=${s}`, s, "wss://stream.example.com/socket"),
  },
  {
    id: "url-fragment",
    needs: "urlsafe",
    place: (_n, s) => t(`https://app.example.com/callback#access_token=${s}&token_type=bearer&expires_in=3600`, s, "expires_in=3600"),
  },
  {
    id: "postgres",
    needs: "urlsafe",
    place: (_n, s, r) => t(`DATABASE_URL=postgres://${pick(r, USERS)}:${s}@${pick(r, HOSTS)}:5432/app?sslmode=require`, s, "5432/app"),
  },
  { id: "mysql", needs: "urlsafe", place: (_n, s, r) => t(`mysql://${pick(r, USERS)}:${s}@${pick(r, HOSTS)}/shop`, s, "/shop") },
  {
    id: "mongodb",
    needs: "urlsafe",
    place: (_n, s) => t(`mongodb+srv://reader:${s}@cluster0.ab1cd.mongodb.net/?retryWrites=true`, s, "retryWrites=true"),
  },
  { id: "redis", needs: "urlsafe", place: (_n, s) => t(`redis://:${s}@cache.internal:6379/0`, s, "cache.internal:6379/0") },
  { id: "amqp", needs: "urlsafe", place: (_n, s) => t(`amqps://guest:${s}@mq.internal:5671/vhost`, s, "mq.internal:5671") },
  {
    id: "azure-connection",
    needs: "urlsafe",
    place: (_n, s) =>
      t(`DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey=${s};EndpointSuffix=core.windows.net`, s, "AccountName=acmestore"),
  },
  {
    id: "jdbc",
    needs: "urlsafe",
    place: (_n, s) => t(`jdbc:sqlserver://db.internal:1433;databaseName=erp;user=sa;password=${s};encrypt=true`, s, "databaseName=erp"),
  },
  {
    id: "curl-user",
    needs: "urlsafe",
    place: (_n, s) => t(`curl -u admin:${s} https://ci.example.com/api/json`, s, "https://ci.example.com/api/json"),
  },
  { id: "mysql-p", needs: "urlsafe", place: (_n, s) => t(`mysql -h db.internal -u root -p${s} shop < dump.sql`, s, "dump.sql") },
  {
    id: "sshpass",
    needs: "urlsafe",
    place: (_n, s) => t(`sshpass -p ${s} ssh deploy@10.0.0.5 'systemctl restart app'`, s, "systemctl restart app"),
  },
  { id: "password-flag", needs: "urlsafe", place: (_n, s) => t(`psql --host=db --password=${s} --dbname=app`, s, "--dbname=app") },
  {
    id: "docker-login",
    needs: "urlsafe",
    place: (_n, s) => t(`docker login -u ci -p ${s} registry.example.com`, s, "registry.example.com"),
  },
  {
    id: "prose-password",
    needs: "urlsafe",
    place: (_n, s) => t(`the wifi password is ${s} and the guest network is open`, s, "guest network is open"),
  },
  {
    id: "prose-token",
    needs: "urlsafe",
    place: (_n, s) => t(`Your new token: ${s}. Keep it somewhere safe.`, s, "Keep it somewhere safe"),
  },
  {
    id: "netrc",
    needs: "urlsafe",
    place: (_n, s) => t(`machine api.heroku.com\n  login me@example.com\n  password ${s}`, s, "machine api.heroku.com"),
  },
  { id: "npmrc", needs: "urlsafe", place: (_n, s) => t(`//registry.npmjs.org/:_authToken=${s}\nsave-exact=true`, s, "save-exact=true") },
  { id: "sql-identified", needs: "urlsafe", place: (_n, s) => t(`CREATE USER report IDENTIFIED BY '${s}';`, s, "CREATE USER report") },
  {
    id: "basic-auth-b64",
    needs: "urlsafe",
    place: (_n, s) => {
      const e = b64(`admin:${s}`);
      return t(`Authorization: Basic ${e}`, e, "Authorization");
    },
  },
  {
    id: "base64-json",
    needs: "urlsafe",
    place: (n, s) => {
      const e = b64(JSON.stringify({ [lower(n)]: s, user: "ci" }));
      return t(`data: ${e}`, e, "data:");
    },
  },
];

/** Multi-line private key blocks. */
const BLOCK: Context[] = [
  { id: "pem-raw", needs: "block", place: (_n, s) => t(s, s) },
  {
    id: "pem-json-escaped",
    needs: "block",
    place: (n, s) =>
      t(`{"${lower(n)}": "${s.replace(/\n/g, "\\n")}", "type": "service_account"}`, s.replace(/\n/g, "\\n"), '"type": "service_account"'),
  },
  {
    id: "pem-yaml-literal",
    needs: "block",
    place: (n, s) => t(`${lower(n)}: |\n${s.replace(/^/gm, "  ")}\nport: 22`, s.replace(/^/gm, "  "), "port: 22"),
  },
  { id: "pem-cat", needs: "block", place: (_n, s) => t(`$ cat ~/.ssh/id_ed25519\n${s}\n$ ls`, s, "$ ls") },
  {
    id: "pem-base64",
    needs: "block",
    place: (_n, s) => {
      const e = b64(s);
      return t(`client-key-data: ${e}`, e, "client-key-data");
    },
  },
];

/** Structured values, as tool arguments arrive (redactValue). */
const STRUCTURED: Context[] = [
  {
    id: "args-env",
    needs: "named",
    place: (n, s) => ({ value: { env: { [n]: s, NODE_ENV: "production" } }, planted: s, keep: ["production"] }),
  },
  {
    id: "args-command",
    needs: "named",
    place: (n, s) => ({ value: { command: `export ${n}=${s} && ./run.sh` }, planted: s, keep: ["./run.sh"] }),
  },
  {
    id: "args-headers",
    needs: "distinct",
    place: (_n, s) => ({
      value: { url: "https://api.example.com", headers: { Authorization: `Bearer ${s}` } },
      planted: s,
      keep: ["https://api.example.com"],
    }),
  },
  {
    id: "args-har",
    needs: "distinct",
    place: (_n, s) => ({
      value: {
        headers: [
          { name: "X-Auth-Token", value: s },
          { name: "Accept", value: "text/html" },
        ],
      },
      planted: s,
      keep: ["text/html"],
    }),
  },
];

export const CONTEXTS: readonly Context[] = [
  ...NAMED,
  ...NAMED_MORE,
  ...HELD_OUT,
  ...ENCODED,
  ...DISTINCT,
  ...URLSAFE,
  ...BLOCK,
  ...STRUCTURED,
];
