/**
 * Provider secret formats: the prefix or structure says what a string is, whatever surrounds it.
 * Modelled on the rule families of the public scanners (gitleaks, secretlint, trufflehog), kept
 * here as compiled patterns rather than a runtime dependency (docs/architecture.md,
 * "Redaction", says why). Each rule is gated by its literal prefix: the scan's automaton
 * (core/redaction/scan.ts) notes which prefixes each long run holds, and only those rules run
 * there (core/redaction/runs.ts), in table order, each compiled on first use. One alternation of
 * all of them ran as fast but took 18 ms to compile, which every hook process (a fresh process
 * per tool call) would have paid on its first redaction.
 *
 * Order matters: an earlier rule's placeholder hides its match from later ones, so a webhook
 * URL is taken whole before the key inside it is seen, and `sk-ant-` before `sk-`.
 *
 * Longer than the house's ~400 lines: a table of formats, which grows by rows.
 */

/** Characters a token body is made of, and what may not follow a match. */
const U = "A-Za-z0-9_-";
const END = `(?![${U}])`;
const HEX = "[a-f0-9]";
const UUID = `${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}`;

export const PROVIDER_RULES: readonly (readonly [id: string, source: string])[] = [
  // URLs that are credentials in themselves, with or without their scheme (`//hooks.slack.com/…`,
  // `hooks.slack.com/services/…`, as configuration and docs write them too).
  ["slack-webhook", "(?:https?:)?(?://)?(?<![\\w.-])hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"],
  ["discord-webhook", "https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/\\d+/[A-Za-z0-9_-]+"],
  ["teams-webhook", "(?:https?:)?(?://)?(?<![\\w.-])[a-z0-9-]+\\.webhook\\.office\\.com/webhookb2/[^\\s\"'<>`]+"],
  ["google-chat-webhook", "https://chat\\.googleapis\\.com/v1/spaces/[^\\s\"'<>`]+"],
  ["zapier-webhook", "https://hooks\\.zapier\\.com/hooks/catch/\\d+/[A-Za-z0-9]+/?"],
  // An Azure SAS URL grants access until it expires: the whole URL goes, host included.
  [
    "azure-sas-url",
    "https://[a-z0-9]{3,24}\\.(?:blob|queue|table|file|dfs)\\.core\\.windows\\.net/[^\\s\"'<>`?]*\\?[^\\s\"'<>`]*?(?<=[?&])sig=[A-Za-z0-9%+/=]{20,}",
  ],
  // Cloud
  ["aws-access-key", "\\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\\b"],
  ["aws-session-token", "\\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{60,}"],
  ["aws-mws", `\\bamzn\\.mws\\.${UUID}\\b`],
  ["google-api-key", `\\bAIza[${U}]{35}${END}`],
  ["google-oauth-token", `\\bya29\\.[${U}]{20,}`],
  ["google-client-secret", `\\bGOCSPX-[${U}]{20,}`],
  ["firebase-fcm", `\\bAAAA[${U}]{7}:APA91b[${U}]{60,}`],
  ["azure-client-secret", "(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"],
  ["alibaba-access-key", "\\bLTAI[A-Za-z0-9]{17,21}\\b"],
  ["tencent-secret-id", "\\bAKID[A-Za-z0-9]{32}\\b"],
  ["yandex-key", `\\b(?:AQVN[${U}]{35,38}|YC[${U}]{38}|t1\\.9euelZ[.${U}]{40,})${END}`],
  ["scaleway-key", "\\bSCW[A-Z0-9]{17}\\b"],
  ["cloudflare-origin-ca", `\\bv1\\.0-${HEX}{24}-${HEX}{146}\\b`],
  ["digitalocean-token", `\\bdo[por]_v1_${HEX}{64}\\b`],
  ["heroku-key", `\\bHRKU-[${U}]{40,}`],
  ["flyio-token", "\\bfm[12][a-z]?_[A-Za-z0-9+/=_,-]{40,}"],
  ["flyio-token", `\\bfo1_[${U}]{40,}`],
  ["render-key", "\\brnd_[A-Za-z0-9]{32,}\\b"],
  ["netlify-token", "\\bnfp_[A-Za-z0-9]{36,}\\b"],
  ["vercel-token", "\\b(?:vcp|vci|vca|vcr|vck)_[A-Za-z0-9]{20,60}\\b"],
  ["supabase-key", "\\b(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})"],
  ["planetscale-token", `\\bpscale_(?:tkn|pw|oauth)_[.=${U}]{32,}`],
  ["neon-key", "\\bnapi_[a-z0-9]{60,}\\b"],
  ["openshift-token", `\\bsha256~[${U}]{43}${END}`],
  ["tailscale-key", "\\btskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}\\b"],
  ["defined-networking", "\\bdnkey-[A-Z0-9]{26}-[A-Z0-9]{52}\\b"],
  ["scalingo-token", `\\btk-us-[${U}]{48}${END}`],
  ["azure-storage-key", "\\bAccountKey=[A-Za-z0-9+/]{86}=="],
  // Amazon Bedrock API keys: long-term `ABSK` and base64 of `BedrockAPIKey-`; short-term
  // `bedrock-api-key-` and base64 of `bedrock.amazonaws.com/?Action=…` (a presigned URL).
  ["aws-bedrock", "\\b(?:ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{20,}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]*)"],
  // ClickHouse Cloud API key secrets: `4b1d` and 38 base62 characters.
  ["clickhouse-secret", "\\b4b1d[A-Za-z0-9]{38}\\b"],
  // Source hosts, CI, registries
  ["github-token", "\\b(?:gh[pousr]_[A-Za-z0-9_]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\\b"],
  ["gitlab-token", `\\b(?:gl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|oas|agent|ffct)-[${U}]{20,}|GR1348941[${U}]{20,})`],
  ["bitbucket-token", "\\bATBB[A-Za-z0-9]{32,}\\b"],
  ["atlassian-token", `\\bAT(?:ATT|CTT)[=${U}]{100,}`],
  ["npm-token", "\\bnpm_[A-Za-z0-9_]{36}\\b"],
  ["pypi-token", `\\bpypi-AgE[${U}]{50,}`],
  ["rubygems-key", "\\brubygems_[a-f0-9]{48}\\b"],
  ["nuget-key", "\\boy2[a-z0-9]{43}\\b"],
  ["docker-hub-token", `\\bdckr_(?:pat|oat)_[${U}]{20,}`],
  ["clojars-token", "\\bCLOJARS_[a-z0-9]{60}\\b"],
  ["circleci-token", "\\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}\\b"],
  ["buildkite-token", "\\bbkua_[a-f0-9]{40}\\b"],
  ["sonarqube-token", "\\bsq[upa]_[a-f0-9]{40}\\b"],
  ["jfrog-token", "\\b(?:AKCp[A-Za-z0-9]{60,}|cmVmdGtu[A-Za-z0-9]{50,})\\b"],
  ["harness-token", `\\b(?:pat|sat)\\.[${U}]{22}\\.[A-Za-z0-9]{24}\\.[${U}]{20}${END}`],
  ["pulumi-token", "\\bpul-[a-f0-9]{40}\\b"],
  ["terraform-token", `\\b[A-Za-z0-9]{14}\\.atlasv1\\.[=${U}]{60,}`],
  ["octopus-key", "\\bAPI-[A-Z0-9]{26}\\b"],
  ["sourcegraph-token", "\\bsgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\\b"],
  ["infracost-key", "\\bico-[A-Za-z0-9]{32}\\b"],
  ["prefect-key", "\\bpnu_[A-Za-z0-9]{36}\\b"],
  ["readme-key", "\\brdme_[a-z0-9]{70}\\b"],
  ["settlemint-token", "\\bsm_(?:pat|aat|sat)_[A-Za-z0-9]{16}\\b"],
  ["doppler-token", "\\bdp\\.(?:pt|st|ct|sa|scim|audit)\\.[A-Za-z0-9.]{40,}"],
  ["vault-token", `\\bhv[sbr]\\.[${U}]{24,}`],
  ["onepassword-token", "\\bops_eyJ[A-Za-z0-9+/=_-]{100,}"],
  ["onepassword-secret-key", "\\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\\b"],
  ["age-secret-key", "\\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7Lqpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}\\b"],
  ["django-secret-key", "\\bdjango-insecure-[A-Za-z0-9!@#$%^&*(_=+)-]{30,}"],
  // Chat, mail, social
  ["slack-token", "\\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xoxe\\.xox[bp]-\\d-[A-Za-z0-9]{20,}|xapp-\\d-[A-Za-z0-9-]{20,})"],
  ["discord-bot-token", `\\b[MNO][A-Za-z0-9_-]{23,27}\\.[${U}]{6}\\.[${U}]{27,40}${END}`],
  // In the Bot API's URLs the token follows `bot` in the path (`https://api.telegram.org/bot<id>:<token>/sendMessage`).
  ["telegram-bot-token", `(?:(?<=(?<![A-Za-z])bot)|(?<![\\w:]))\\d{8,10}:AA[${U}]{33}${END}`],
  ["twilio-key", "\\bSK[a-f0-9]{32}\\b"],
  ["sendgrid-key", `\\bSG\\.[${U}]{16,32}\\.[${U}]{16,64}${END}`],
  ["mailgun-key", "\\bkey-[0-9a-f]{32}\\b"],
  ["mailchimp-key", "\\b[0-9a-f]{32}-us\\d{1,2}\\b"],
  ["mandrill-key", `\\bmd-[${U}]{22}${END}`],
  ["brevo-key", "\\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\\b"],
  ["resend-key", "\\bre_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}\\b"],
  ["twitter-bearer", "\\bA{22}[A-Za-z0-9%]{60,}"],
  ["facebook-token", "\\bEAA[A-Za-z0-9]{60,}"],
  ["instagram-token", `\\bIGQV[${U}]{60,}`],
  ["postman-key", "\\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\\b"],
  ["linear-key", "\\blin_(?:api_[A-Za-z0-9_]{32,128}|oauth_[a-f0-9]{64})\\b"],
  ["notion-token", "\\b(?:ntn_\\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\\b"],
  ["figma-token", `\\bfig[dou]_[${U}]{40,}`],
  ["asana-token", "\\b[12]/\\d{16}(?:/\\d{16})?:[a-f0-9]{32}\\b"],
  ["trello-token", "\\bATTA[a-f0-9]{64}\\b"],
  ["clickup-key", "\\bpk_\\d{6,10}_[A-Z0-9]{32}\\b"],
  ["airtable-token", "\\bpat[A-Za-z0-9]{14}\\.[a-f0-9]{64}\\b"],
  ["dropbox-token", `\\bsl\\.(?:u\\.)?[${U}]{100,}`],
  ["contentful-token", `\\bCFPAT-[${U}]{43}${END}`],
  ["hubspot-token", `\\bpat-(?:na|eu)\\d-${UUID}\\b`],
  ["typeform-token", `\\btfp_[${U}]{40,}`],
  ["frameio-token", `\\bfio-u-[${U}]{64}${END}`],
  ["beamer-key", `\\bb_[${U}]{44}${END}`],
  ["adobe-secret", `\\bp8e-[${U}]{32}${END}`],
  ["intra42-secret", "\\bs-s4t2(?:ud|af)-[a-f0-9]{64}\\b"],
  ["maxmind-key", "\\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\\b"],
  // Observability
  ["grafana-token", "\\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}|eyJrIjoi[A-Za-z0-9+/]{50,}={0,2})"],
  ["newrelic-key", "\\bNR(?:AK|II|JS|AA|RA)-[A-Za-z0-9_-]{19,42}(?![A-Za-z0-9_])"],
  ["sentry-token", "\\b(?:sntrys_eyJ[A-Za-z0-9+/=_-]{60,}|sntryu_[a-f0-9]{64})"],
  ["dynatrace-token", "\\bdt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}\\b"],
  ["launchdarkly-key", `\\b(?:api|sdk|mob)-${UUID}\\b`],
  ["posthog-key", "\\bphx_[A-Za-z0-9]{43}\\b"],
  ["langsmith-key", "\\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\\b"],
  ["databricks-token", "\\bdapi[a-fA-F0-9]{32}(?:-\\d)?\\b"],
  // Payments, commerce
  ["stripe-key", "\\b(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{16,}\\b|whsec_[A-Za-z0-9+/=]{24,}(?![A-Za-z0-9+/=]))"],
  ["square-token", `\\b(?:sq0(?:atp|csp)-[${U}]{22,43}|EAAA[${U}]{60})${END}`],
  ["shopify-token", "\\bshp(?:at|ca|pa|ss)_[a-zA-Z0-9]{32,64}\\b"],
  ["plaid-token", `\\baccess-(?:sandbox|development|production)-${UUID}\\b`],
  ["braintree-token", "\\baccess_token\\$(?:production|sandbox)\\$[a-z0-9]{16}\\$[a-f0-9]{32}\\b"],
  ["razorpay-key", "\\brzp_(?:live|test)_[A-Za-z0-9]{14,}\\b"],
  ["flutterwave-key", "\\bFLW(?:SECK|PUBK)(?:_TEST)?-[a-f0-9]{32}-X\\b"],
  // Flutterwave's encryption key: `FLWSECK_TEST` or `FLWSECK` and 12 hex digits.
  ["flutterwave-key", "\\bFLWSECK(?:_TEST)?-?[a-fA-F0-9]{12}(?![A-Za-z0-9_-])"],
  ["gitlab-session", "\\b_gitlab_session=[a-f0-9]{32}\\b"],
  ["duffel-token", `\\bduffel_(?:live|test)_[=${U}]{43}`],
  ["easypost-key", "\\bEZ[AT]K[A-Za-z0-9]{54}\\b"],
  ["shippo-token", "\\bshippo_(?:live|test)_[a-f0-9]{40}\\b"],
  // Model providers and AI tooling (Anthropic before the generic sk- family)
  ["anthropic-key", `\\bsk-ant-[${U}]{20,}`],
  ["openai-key", `\\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[${U}]{20,}`],
  ["elevenlabs-key", "\\bsk_[a-f0-9]{48}\\b"],
  ["huggingface-token", "\\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\\b"],
  ["groq-key", "\\bgsk_[A-Za-z0-9]{40,}\\b"],
  ["xai-key", "\\bxai-[A-Za-z0-9]{40,}\\b"],
  ["replicate-token", "\\br8_[A-Za-z0-9]{30,}\\b"],
  ["perplexity-key", "\\bpplx-[A-Za-z0-9]{40,}\\b"],
  ["fireworks-key", "\\bfw_[A-Za-z0-9]{24,}\\b"],
  ["pinecone-key", "\\bpcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}\\b"],
  ["tavily-key", "\\btvly-(?:dev-|prod-)?[A-Za-z0-9]{32}\\b"],
  ["firecrawl-key", "\\bfc-[a-f0-9]{32}\\b"],
  ["mapbox-token", `\\bsk\\.eyJ[${U}]{20,}\\.[${U}]{20,}`],
];

/** Extra checks for rules whose pattern alone would take ordinary words. */
export const PROVIDER_CHECKS: Readonly<Record<string, (m: string) => boolean>> = {
  // `sk-` is also a plain word prefix (sk-learn, sk-SK): a key has digits and letters after it.
  // A key is random; `sk-learn-compat-layer-v2` is lowercase words joined by dashes.
  // DeepSeek's `sk-` and 32 hex digits may hold no two letters in a row.
  "openai-key": (m) =>
    /\d/.test(m) &&
    (/[A-Za-z]{2}/.test(m.slice(3)) || /^sk-[a-f0-9]{32,}$/.test(m)) &&
    !(!/[A-Z]/.test(m) && /^sk-(?!or-v1-)(?:[a-z0-9]+-){2,}/.test(m)),
  // The Discord bot pattern also fits dotted identifiers: a token mixes case and digits in each part.
  "discord-bot-token": (m) => /\d/.test(m) && /[a-z]/.test(m) && /[A-Z]/.test(m.slice(1)),
  // GitHub's, npm's and Linear's tokens are base62; secretlint's preset also takes a `_` in the
  // body, and so does Baton, but an identifier has one too (`ghs_installation_token_for_repo`,
  // `npm_package_devDependencies__types_react` in a script's environment): a body with a `_`
  // must hold a digit.
  "github-token": (m) => m.startsWith("github_pat_") || !m.includes("_", 4) || /\d/.test(m.slice(4)),
  // Hugging Face's tokens are random letters (digits seldom): two capitals side by side, or a
  // digit; a name in camelCase after `hf_` (`hf_requiredCharacteristicTypes…`) has neither.
  "huggingface-token": (m) => /\d|[A-Z]{2}/.test(m.slice(m.indexOf("_") + 1)),
  // Infracost's keys mix cases; `video_box.ico-7a38…` is a hashed asset's name.
  "infracost-key": (m) => /[A-Z]/.test(m.slice(4)),
  // A hex digest can start with `4b1d` too: a ClickHouse secret is base62, with both cases.
  "clickhouse-secret": (m) => /[A-Z]/.test(m) && /[a-z]/.test(m.slice(4)),
  "npm-token": (m) => !m.includes("_", 4) || /\d/.test(m.slice(4)),
  "linear-key": (m) => !m.startsWith("lin_api_") || !m.includes("_", 8) || /\d/.test(m.slice(8)),
};

/**
 * The shortest match of the rules whose literal is short or common (`.`, `sk`, `yc`, `1/`, `q~`):
 * a run shorter than this is not tried. The literal `.` alone would try the Discord pattern on
 * every dotted path and host.
 */
const MIN_LENGTH: Readonly<Record<string, number>> = {
  // Also the rules whose literal turns up in many runs too short to hold a match (`pat`, `sk-`,
  // `gl`, `AAAA`): trying their pattern there was most of what they cost.
  "airtable-token": 82,
  "hubspot-token": 44,
  "firebase-fcm": 78,
  "elevenlabs-key": 51,
  "figma-token": 45,
  "azure-storage-key": 99,
  "github-token": 33,
  "openai-key": 23,
  "gitlab-token": 25,
  "stripe-key": 24,
  "discord-bot-token": 59,
  "twilio-key": 34,
  "yandex-key": 39,
  "asana-token": 51,
  "beamer-key": 46,
  "azure-client-secret": 37,
  "telegram-bot-token": 44,
  "launchdarkly-key": 40,
  "mailgun-key": 36,
  "mailchimp-key": 36,
};

/**
 * Literals for the rules whose pattern does not start with one, as a match spells them (one
 * must be present); also, where the leading literal is too short to gate well (`gh`, `gl`,
 * `at`, `do`), the full prefixes.
 */
const EXPLICIT_HINTS: Readonly<Record<string, readonly string[]>> = {
  // `https://` alone would try these on every URL.
  "discord-webhook": ["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
  "slack-webhook": ["hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"],
  "teams-webhook": [".webhook.office.com/webhookb2/"],
  "azure-client-secret": ["Q~"],
  "azure-sas-url": [".core.windows.net/"],
  "discord-bot-token": ["."],
  "telegram-bot-token": [":AA"],
  "mailchimp-key": ["-us"],
  "twitter-bearer": ["AAAAAAAAAAAAAAAAAAAAAA"],
  "terraform-token": [".atlasv1."],
  "maxmind-key": ["_mmk"],
  "yandex-key": ["AQVN", "YC", "t1.9euelZ"],
  "stripe-key": ["_live_", "_test_", "_prod_", "whsec_"],
  "github-token": ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
  "gitlab-token": [
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glsoat-",
    "glcbt-",
    "glimt-",
    "glft-",
    "gloas-",
    "glagent-",
    "glffct-",
    "GR1348941",
  ],
  "atlassian-token": ["ATATT", "ATCTT"],
  "digitalocean-token": ["_v1_"],
  "flyio-token": ["fm1", "fm2", "fo1_"],
  "vault-token": ["hvs.", "hvb.", "hvr."],
  "sonarqube-token": ["squ_", "sqp_", "sqa_"],
  "newrelic-key": ["NRAK-", "NRII-", "NRJS-", "NRAA-", "NRRA-"],
  "harness-token": ["pat.", "sat."],
  "easypost-key": ["EZAK", "EZTK"],
  "launchdarkly-key": ["api-", "sdk-", "mob-"],
  "asana-token": ["1/", "2/"],
};

/** The rules of `EXPLICIT_HINTS` whose every match still starts with one of the hints. */
const LEADING_HINTS = new Set([
  "github-token",
  "gitlab-token",
  "atlassian-token",
  "flyio-token",
  "vault-token",
  "sonarqube-token",
  "newrelic-key",
  "harness-token",
  "easypost-key",
  "launchdarkly-key",
  "asana-token",
  "yandex-key",
  "twitter-bearer",
]);

/**
 * The literal prefixes of a pattern, as a match spells them: after `\b`, either plain text or the
 * alternatives of a leading `(?:…|…)`. Empty when one cannot be read off (the rule then needs
 * `EXPLICIT_HINTS`).
 */
function leadingLiterals(source: string): string[] {
  let s = source.startsWith("\\b") ? source.slice(2) : source;
  const lit = (x: string): string => {
    let out = "";
    for (let i = 0; i < x.length; i++) {
      const c = x[i] as string;
      if (c === "\\") {
        const n = x[i + 1] as string;
        if (!/[.$/~:-]/.test(n)) break;
        out += n;
        i++;
      } else if ("[](){}*+?|^$".includes(c)) break;
      else out += c;
    }
    return out;
  };
  if (s.startsWith("(?:")) {
    let depth = 0;
    let end = -1;
    for (let i = 0; i < s.length; i++) {
      if (s[i] === "\\") i++;
      else if (s[i] === "(") depth++;
      else if (s[i] === ")" && --depth === 0) {
        end = i;
        break;
      }
    }
    const inner = s.slice(3, end);
    const alts: string[] = [];
    let d = 0;
    let start = 0;
    for (let i = 0; i < inner.length; i++) {
      if (inner[i] === "\\") i++;
      else if (inner[i] === "(") d++;
      else if (inner[i] === ")") d--;
      else if (inner[i] === "|" && d === 0) {
        alts.push(inner.slice(start, i));
        start = i + 1;
      }
    }
    alts.push(inner.slice(start));
    const lits = alts.map(lit);
    return lits.every((l) => l.length >= 2) ? lits : [];
  }
  s = lit(s);
  return s.length >= 2 ? [s] : [];
}

/**
 * Cheap tests a run must pass before a rule's pattern is tried there, for rules whose literal
 * is too common to gate them alone: a Discord bot token's two dots, six characters apart, in
 * a run that holds the literal `.` (every dotted host and path); an Asana token's colon.
 */
const GATES: Readonly<Record<string, (run: string) => boolean>> = {
  "discord-bot-token": (run) => {
    for (let i = run.indexOf("."); i >= 0 && i + 7 < run.length; i = run.indexOf(".", i + 1)) if (run.charCodeAt(i + 7) === 46) return true;
    return false;
  },
  // `1/` and `2/` are in every date and path: an Asana token has the colon before its hex.
  "asana-token": (run) => run.includes(":"),
};

/**
 * For the rules the scan does not look for (`ProviderRule.scanned`) whose literal is longer than
 * one character: a pattern every match holds: the literal with what the rule requires beside it
 * (the tail after it; Azure's digit before `Q~`), without the look-behinds and the classes
 * before it. One search of a long
 * run for all of them (core/redaction/runs.ts `UNSCANNED_SEEK`) turns away most runs that hold a
 * literal (`SK` in `TASK_`, `1/` in every date and path) before any rule is tried there.
 */
const SEEK: Readonly<Record<string, string>> = {
  "azure-client-secret": "\\dQ~[A-Za-z0-9_~.-]{31}",
  "yandex-key": `AQVN[${U}]{35}|YC[${U}]{38}|t1\\.9euelZ[.${U}]{40}`,
  "twilio-key": "SK[a-f0-9]{32}",
  "asana-token": "[12]/\\d{16}",
  "beamer-key": `b_[${U}]{44}`,
};

export interface ProviderRule {
  id: string;
  /** Literals one of which every match contains, as a match spells them: a run without one is not tried. */
  literals: readonly string[];
  /** The same in lowercase, for the scan's automaton (core/redaction/scan.ts), which folds case. */
  hints: readonly string[];
  /** Compiled on first use: most texts never need most rules (one alternation of all of them took 18 ms to compile, on every hook's first call). */
  re: () => RegExp;
  /**
   * Whether every match starts with one of `literals`. Such a rule's pattern is tried only where
   * a literal stands (`sticky`, compiled on first use): run over a whole run, a pattern that
   * starts with a look-behind (`START`) is tried at every character.
   */
  leading: boolean;
  sticky: () => RegExp;
  /** Runs shorter than this are not tried. */
  min: number;
  /** A cheap test a run must pass before the pattern is tried (`GATES`), if any. */
  gate: ((run: string) => boolean) | undefined;
  /**
   * Whether the scan's automaton looks for the literals. A literal of one or two characters
   * (`.`, `SK`, `YC`, `1/`, `b_`, `Q~`) turns up in most texts (`task`, every dotted host), and
   * reporting each cost the scan more than testing the few long runs for it: such a rule is
   * tried on a run of its length where one search finds what every match of it holds (`seek`),
   * then one pass over a table of character pairs finds a literal's first characters
   * (core/redaction/runs.ts `unscannedHeads`), then its literals searched for.
   */
  scanned: boolean;
  /** For a rule the scan does not look for: a pattern every match holds (`SEEK`), or undefined (a literal of one character). */
  seek: string | undefined;
}

/**
 * What a provider pattern's leading `\b` becomes: not after a letter, but after a digit, `_` or a
 * percent escape (`%22ghp_…`, `MY_ghp_…`, `1ghp_…`, `token%3Dghp_…`), where `\b` fails and a
 * glued or URL-encoded token would otherwise be left readable.
 */
const START = "(?:(?<=%[0-9A-Fa-f]{2})|(?<![A-Za-z]))";
/** The same for a short prefix without a separator (`YC`, `SK`): after a digit it is more likely the middle of another token. */
const START_SHORT = "(?:(?<=%[0-9A-Fa-f]{2})|(?<![A-Za-z0-9]))";
const distinctive = (hints: readonly string[]) => hints.every((h) => h.length >= 4 || /[_.-]/.test(h));

export const PROVIDERS: readonly ProviderRule[] = PROVIDER_RULES.map(([id, raw]) => {
  const literals = EXPLICIT_HINTS[id] ?? leadingLiterals(raw);
  const source = raw.startsWith("\\b") ? (distinctive(literals) ? START : START_SHORT) + raw.slice(2) : raw;
  if (literals.length === 0) throw new Error(`redact-providers: rule ${id} has no literal to gate it; add it to EXPLICIT_HINTS`);
  let re: RegExp | undefined;
  let sticky: RegExp | undefined;
  return {
    id,
    literals,
    hints: literals.map((l) => l.toLowerCase()),
    re: () => (re ??= new RegExp(source, "g")),
    leading: EXPLICIT_HINTS[id] === undefined || LEADING_HINTS.has(id),
    sticky: () => (sticky ??= new RegExp(source, "y")),
    min: MIN_LENGTH[id] ?? 16,
    gate: GATES[id],
    scanned: literals.every((l) => l.length >= 3),
    seek: SEEK[id],
  };
});
for (const r of PROVIDERS)
  if (!r.scanned && r.seek === undefined && r.literals.some((l) => l.length > 1))
    throw new Error(`redact-providers: rule ${r.id} is not scanned for and has no SEEK pattern; add one`);
