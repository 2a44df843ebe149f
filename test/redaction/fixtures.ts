/**
 * Hand-written, real-world shapes (not produced by the corpus generator): leaks and
 * over-redactions a second reading found. test/redaction-fixtures.test.ts pins each case; the
 * corpus (corpus.ts) also scores them, so recall and precision stay measured on them.
 */

/** [text, the secret that must not survive] */
export const LEAK_FIXTURES: readonly (readonly [string, string])[] = [
  ["{'user': 'bob', 'password': 'hunter2Xy9'}", "hunter2Xy9"],
  ["DATABASES = {'default': {'PASSWORD': 'dj4ngoPw0rd', 'HOST': 'db'}}", "dj4ngoPw0rd"],
  [
    "callback?id_token%3DeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
  ],
  ["body=%22ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ%22", "ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  ["next=%2Fapi%3Ftoken%3Dghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ", "R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  [
    "u=%2Fv1%3Fkey%3Dsk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7nP9rS1tU3wX5zA7",
    "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7nP9rS1tU3wX5zA7",
  ],
  ["MY_ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ", "R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  ["1ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ", "R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  ['[{"name": "DB_PASSWORD", "value": "kV9x-p4ss-Qz"}]', "kV9x-p4ss-Qz"],
  ['"environment": [{"name":"API_TOKEN","value":"t0k3n-Zx81-Qq"}]', "t0k3n-Zx81-Qq"],
  ['ds.setPassword("s3tterPw9!");', "s3tterPw9!"],
  ['builder.withPassword("w1thPw-77x")', "w1thPw-77x"],
  ['let cfg = Config { secret: String::from("rustS3cret99"), port: 80 };', "rustS3cret99"],
  ["const apiToken = `g0B4ckt1ck-T0ken`", "g0B4ckt1ck-T0ken"],
  ['let password = r#"r4wStr1ng-Pw"#;', "r4wStr1ng-Pw"],
  ['{"url":"https:\\/\\/hooks.slack.com\\/services\\/T0123ABCD\\/B0123ABCD\\/aBcDeFgHiJkLmNoPqRsTuVwX"}', "aBcDeFgHiJkLmNoPqRsTuVwX"],
  ["db:\n  password: |\n    bl0ckScalarPw9\n  host: db\n", "bl0ckScalarPw9"],
  ["db.internal:5432:app:appuser:pgP4ssw0rdX", "pgP4ssw0rdX"],
  ["git clone https://ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ@github.com/acme/app.git", "R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  ["git remote add o https://a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9@github.com/acme/app.git", "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ["echo dockerPw77x | docker login --username bob --password-stdin", "dockerPw77x"],
  ["echo sud0Pw77x | sudo -S apt-get update", "sud0Pw77x"],
  ["echo 'sud0Pw77x' | sudo -k -S systemctl restart app", "sud0Pw77x"],
  ["printf '%s\\n' sud0Pw77x | sudo -u deploy --stdin ls /srv", "sud0Pw77x"],
  ["echo sud0Pw77x | sudo -kS whoami", "sud0Pw77x"],
  ["login ok: user=bob pw=Summer2024!", "Summer2024!"],
  ["SMTP_PW=m4ilPw-2024", "m4ilPw-2024"],
  ['{"user": "bob", "pw": "hunter2Xy9"}', "hunter2Xy9"],
  ['adminPw := "g0AdminPw9"', "g0AdminPw9"],
  ["SSHPASS=sshP4ss99 sshpass -e ssh bob@host", "sshP4ss99"],
  ["ENCRYPTION_KEY=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "9f86d081884c7d659a2feaa0c55ad015"],
  ["WEBHOOK_SECRET=3f786850e387550fdab836ed7e6dc881de23001b", "3f786850e387550fdab836ed7e6dc881"],
  ["bob:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "HqJZimcKQFAMYayBlzkrA"],
  ["alice:$2y$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy", "N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"],
  [
    "root:$6$salt1234$Xy7zQ1wE9rT5uI3oP2aS4dF6gH8jK0lZ.xC1vB3nM5qW7eR9tY1uI3oP5aS7dF9gH1jK3lZ5xC7vB9nM1qW3e:19000:0:99999:7:::",
    "Xy7zQ1wE9rT5uI3oP2aS4dF6gH8jK0lZ",
  ],
  ["Server=db;Database=app;User Id=sa;Password=S3cr3t Passw0rd;Encrypt=true", "Passw0rd"],
  ["DB_PASSWORD=correct horse battery", "horse battery"],
  ["postgres://u:p@ss:w0rd@db.example.com:5432/app", "ss:w0rd"],
  [
    "Private-Lines: 14\nAAAAgQDbT1nBq7zW0hFqX2wBr3kfJ5mD9xL8sE4uYpT6vQ1cR7aN2gH0iK3jM5oP\nAAAAIQDxY9bZ4wE7rT2uI6oP1aS5dF8gH3jK0lZ9xC4vB7nM2qW5eR\nPrivate-MAC: 4f1e",
    "xY9bZ4wE7rT2uI6oP1aS5dF8gH3jK0lZ",
  ],
  // Django keys unquoted (their alphabet has `%`, `&`, `(`, `)`, `+`, which cut the value or read as URL escapes).
  ["secret_key: 8r_ccd%ib_y1^=b2%^gl9m@8i%-j^uo&pbykn8bpez^6(289dy", "pbykn8bpez"],
  ["DJANGO_SECRET_KEY: (2v0(w@ryow_*)s=kv8i(%m=kiwb5!n8b=+s5_b+%o&h!ef66k", "kiwb5!n8b"],
  ["docker run -e SECRET_KEY=yd)dol7gx8(to3wo)ye0729f-m5%#mb(a&4p^9+#_ee181m(#g -p 8080:8080 app", "4p^9+#_ee181m"],
  ["manage.py runserver --secret-key=hq1cflehlb9_%!tv27se!rv@bqm%3e0%(_p%#n3jo4#h8qu8cu", "n3jo4#h8qu8cu"],
  ["export SECRET_KEY=django-insecure-z#*t8+2noyl^q%63dn7b&)o5v-uf)2y+4go9_6fw2+7b@yxa7+", "2noyl^q"],
  // An Azure SAS URL inside URL-encoded JSON: the URL grants access, so it goes whole.
  [
    "payload=%7B%22azureSasUrl%22%3A%22https%3A%2F%2Facct90l9xj.blob.core.windows.net%2Fc%3Fsv%3D2022-11-02%26ss%3Db%26srt%3Dco%26sp%3Drl%26se%3D2030-01-01T00%3A00%3A00Z%26sig%3DmzDIvoKxLzIpmM5jDlhgCYcdU8rbB1hyWQnYYxY3xlQ%253D%22%2C%22id%22%3A7%7D",
    "acct90l9xj",
  ],
  // `…_KEY` values the randomness test took for names or paths.
  ["MAPS_KEY=a1b2c3d4e5f6g7h8", "a1b2c3d4e5f6g7h8"],
  ["signing_key: /FPCs3goBfECWCwSdHGzLES/K1ElGxOXVrNLGTqyrc91", "FPCs3goBfECWCwSdHG"],
  ['config["AWS_SECRET_ACCESS_KEY"] = "/UcxPHnza/KH0OUpcrYNNJ1InnGlYJjGObgVE45Q";', "UcxPHnza"],
  // Prose whose value starts like a version (`v7…`) or a path (`/…`).
  ["Set COHERE_API_KEY to v24OJQT5dU0wkRcJfWTNmNTsWOiamjw8Z67krV3A before running the tests.", "v24OJQT5dU0wkRcJfWTN"],
  ["machine api.heroku.com\n  password v7HaIR94NRQBJ49yC8mdRG", "v7HaIR94NRQBJ49yC8mdRG"],
  // Still caught beside the shapes THIRD_PARTY_KEEP leaves alone: `pass` alone or last, `PWD`
  // holding a password, a password shaped like a member access in an INI or properties line or a
  // quoted string, a bare value where no declaration or `;` says code.
  ["transport = nodemailer.createTransport({ auth: { user: 'bob', pass: 'hunt3r-Xy9' } })", "hunt3r-Xy9"],
  ["DB_PASS=s3cretPw9", "s3cretPw9"],
  ["smtp_pass: Wq8rTz1vLm", "Wq8rTz1vLm"],
  ["{ PWD: 'S3cr3t!pw' }", "S3cr3t!pw"],
  ["[database]\npassword = Hunter2.word\n", "Hunter2.word"],
  ["spring.datasource.password = S3cret.pass", "S3cret.pass"],
  ['ENV["SMTP_PASSWORD"] = "GokHheAo0OpCJS.u"', "GokHheAo0OpCJS.u"],
  ["token = creds2.tokenValue9", "creds2.tokenValue9"],
  ['"password": "1.2.3.4.5-secret"', "1.2.3.4.5-secret"],
  ["the password is hunter2-xyz9", "hunter2-xyz9"],
  ["API_KEY is 9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c7d659a2feaa0c55ad015"],
  // The edges of those shapes, found by a second reading: each leaked from a first version.
  ['{"userName": "bob", "passWord": "Xk9mP2vQ7"}', "Xk9mP2vQ7"],
  ["DB_PASS_PROD=Xk9mP2vQ7", "Xk9mP2vQ7"],
  ["PASS_PHRASE=Xk9mP2vQ7 ./deploy.sh", "Xk9mP2vQ7"],
  ["db_password=!QAZ2wsx", "!QAZ2wsx"],
  ["password: 12.05.1990", "12.05.1990"],
  ['"password": "2.0.0-Hunter2xyz"', "Hunter2xyz"],
  ["password: Welcome1.Home!", "Welcome1.Home"],
  ["[database]\npassword = Hunter2.word!\n", "Hunter2.word"],
  ['password: "Password!"', "Password!"],
  ["KEYCLOAK_ADMIN_PASSWORD=keycloak-admin-password", "keycloak-admin-password"],
  ['POSTGRES_PASSWORD: "POSTGRES_ADMIN"', "POSTGRES_ADMIN"],
  ["Password=Summer2024.prod;Server=db;User Id=sa", "Summer2024.prod"],
  ["Connecting with host=db, user=bob, password=Summer2024.prod, port=5432", "Summer2024.prod"],
  ["{Host:db User:bob Password:Summer2024.prod}", "Summer2024.prod"],
  ["db_password=Xk9mP2vQ7(prod)", "Xk9mP2vQ7"],
  ["my password is iLove2Code", "iLove2Code"],
  ["the signing key is Kq8s7dLw3ZxP0v", "Kq8s7dLw3ZxP0v"],
  ["aes_key: 0x9F86D081884C7D659A2FEAA0C55AD015", "9F86D081884C7D659A2FEAA0C55AD015"],
  ["ADMIN_PASSWORD_MD5=5f4dcc3b5aa765d61d8327deb882cf99", "5f4dcc3b5aa765d61d8327deb882cf99"],
  ["https://maps.example.com/api?key=qwhxzmvplkrtyuiopasdfgh", "qwhxzmvplkrtyuiopasdfgh"],
  ["pass: 'Passwört123'", "Passwört123"],
  ["db: {user: bob, password: Summer2024.prod, port: 5432}", "Summer2024.prod"],
  ["user = bob, password = Summer2024.prod, port = 5432", "Summer2024.prod"],
  ["password: 12.5.1990", "12.5.1990"],
  ["password = Xk9mP2vQ7(prod)", "Xk9mP2vQ7"],
  ['secret: "Secret!"', "Secret!"],
  // Beside the command outputs now kept: a real `-u user:password`, a password with a colon.
  ["curl -u admin:S3cretPw9 https://api.example.com/v1/items", "S3cretPw9"],
  ["the password is hunter2:2024", "hunter2:2024"],
  ["the password is Summer:2024", "Summer:2024"],
  ["machine api.example.com login bob password root:12345678", "root:12345678"],
  ["DATABASE_URL=postgres://app:Xk9#mP2vQ7@db/app", "Xk9#mP2vQ7"],
  // A base64 password (`openssl rand -base64`), written into the URL unencoded.
  ["DATABASE_URL=postgres://app:Ab3/xY+zQ9kL@db:5432/app", "Ab3/xY+zQ9kL"],
  ["git clone https://bob:Xk9/mP2vQ7@git.example.com/r.git", "Xk9/mP2vQ7"],
  ["REDIS_URL=redis://:pa?ss/w0rd@cache:6379", "pa?ss/w0rd"],
  // A URL inside a port URL's query, and passwords with `#` (a second reading of the above).
  ["GET http://127.0.0.1:4040/api?url=redis://:S3cr3tPass@cache:6379", "S3cr3tPass"],
  ["http://localhost:3000/login?next=postgres://app:Xk9mP2vQ7@db/app", "Xk9mP2vQ7"],
  ["postgres://app:p@ss#w0rd@db/app", "ss#w0rd"],
  ["postgres://app:7#Spring2024@db/app", "Spring2024"],
  // Shapes two held-out corpora found leaking (issue 32), several provider families each.
  // A value on its own line inside an XML element.
  ["<apiToken>\n    ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ\n</apiToken>", "R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  ["<config>\n  <apiToken>\n    a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9\n  </apiToken>\n</config>", "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ["<settings>\n  <password>\n    Hunter2xyz99\n  </password>\n</settings>", "Hunter2xyz99"],
  ["<twilioAuthToken>\r\n\t3f786850e387550fdab836ed7e6dc881\r\n</twilioAuthToken>", "3f786850e387550fdab836ed7e6dc881"],
  // Typed declarations (Go, Java, TypeScript, Kotlin, Rust, Python).
  ['var stripeToken string = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"', "4eC39HqLyjWDarjtT1zdp7dc"],
  ['var apiToken string = "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"', "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ['String apiKey = "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9";', "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ['let token: string = "Zx9Qw2Lk7Vb3Nm8Pq4Rt";', "Zx9Qw2Lk7Vb3Nm8Pq4Rt"],
  ['const secret: string = "Xk9mP2vQ7zzLm";', "Xk9mP2vQ7zzLm"],
  ['val datadogApiKey: String = "9f86d081884c7d659a2feaa0c55ad015"', "9f86d081884c7d659a2feaa0c55ad015"],
  ['let api_key: &str = "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9";', "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ['slack_token: str = "xoxb-12345678901-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"', "AbCdEfGhIjKlMnOpQrStUvWx"],
  // Make's `:::=` and `::=`.
  ['TOKEN :::= "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"', "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ["API_KEY :::= Zx9Qw2Lk7Vb3Nm8Pq4Rt", "Zx9Qw2Lk7Vb3Nm8Pq4Rt"],
  ['SECRET ::= "Xk9mP2vQ7zzLm"', "Xk9mP2vQ7zzLm"],
  // A dotenv file's values, whatever the keys are called.
  ["SERVICE_VALUE=a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9\nPORT=8080\nDEBUG=true", "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ["# .env.production\nAPP_NAME=shop\nSERVICE_VALUE=Xk9mP2vQ7zzLm\nPORT=8080\n", "Xk9mP2vQ7zzLm"],
  ['export DD_VALUE="ab12cd34ef56ab12cd34ef56ab12cd34"\nexport NODE_ENV=production', "ab12cd34ef56ab12cd34ef56ab12cd34"],
  ["APP_URL=https://shop.example.com\nUPSTREAM_AUTH=wJalrXUtnFEMI/K7MDENG+bPxRfiCY # rotated\n", "wJalrXUtnFEMI/K7MDENG"],
  // Tokens in a URL's path.
  ["curl https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawX/sendMessage", "HdqTcvCH1vGWJxfSeofSAs0K5PALDsawX"],
  ["GET https://api.telegram.org/bot7712345678:AAEk9mP2vQ7zLmN3pQ5rS7tU9vW1xY3zA5b/getUpdates 200", "Ek9mP2vQ7zLmN3pQ5rS7tU9vW1xY3zA5b"],
  ["POST https://api.example.com/hooks/ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ/notify", "R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ"],
  ["https://example.com/v1/sk_live_4eC39HqLyjWDarjtT1zdp7dc/charges", "4eC39HqLyjWDarjtT1zdp7dc"],
  // Card numbers that pass the Luhn check, in logs and bare errors (Visa, Mastercard, Amex, Discover, JCB).
  ["[2025-03-02 10:11:12] INFO uploading with 4111111111111111 (attempt 2/5)", "4111111111111111"],
  ["Error: request failed with 402 for 5500005555555559\n    at charge (/app/src/pay.ts:42:11)", "5500005555555559"],
  ["Error: declined 378282246310005", "378282246310005"],
  ["4242424242424242", "4242424242424242"],
  ["WARN retrying with 6011111111111117 after timeout", "6011111111111117"],
  ["ValueError: 3530111333300000", "3530111333300000"],
  // A bare 40-character cloud secret key in free text (Low item 9).
  ["rotate to wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY tonight", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  ["Decision: the new key is 9xR2bT7qLm4Zp8WvN3kY6sHd1Fg5Jc0QaEuViOtB.", "9xR2bT7qLm4Zp8WvN3kY6sHd1Fg5Jc0QaEuViOtB"],
  ["aws configure set aws_secret_access_key (Kq8s7dLw3ZxP0v+Yt5Rb2Nm9Hc4Jf6Ga1Ue8Wi0O)", "Kq8s7dLw3ZxP0v+Yt5Rb2Nm9Hc4Jf6Ga1Ue8Wi0O"],
  // Shapes the held-out measurement (bench/redact-heldout.mjs: gitleaks' and detect-secrets' own
  // test cases) found leaking; each is a shape, the values here are made up.
  // A scheme of the service's own before the credential (Dynatrace `Api-Token`, Okta `SSWS`).
  ['curl -H "Authorization: Api-Token dt0c01ST2EY72KQINMH574WMNVI7YN" https://api.example.com/v2/items', "ST2EY72KQINMH574WMNVI7YN"],
  ["Authorization: SSWS 00Qd8fTnMkL3cP9xW2yRv7bZ4hJ6sA1eG5uK0tNq", "00Qd8fTnMkL3cP9xW2yRv7bZ4hJ6sA1eG5uK0tNq"],
  // `-u`/`--user` as the shell quotes it, and a token as the user with no password.
  ["curl --user kevin:'pRf7vG2h1L8nQkW9' -X PATCH https://api.example.com/users/7", "pRf7vG2h1L8nQkW9"],
  ['curl -s --user "j.smith:dB2yF6@qL9vZm1P#4J" "https://api.example.com/user/me"', "dB2yF6@qL9vZm1P#4J"],
  ['curl --user "{svc-reporting}":"{Zq5kVrX1n8tA2w}" https://gateway.example.com/api', "Zq5kVrX1n8tA2w"],
  ['curl -u "d2LkV78zLx9t4QwP:" https://api.example.com/v1/charges', "d2LkV78zLx9t4QwP"],
  // Key material under a `…_KEY` name of several words: hex, a UUID, letters and digits scattered.
  ["KUCOIN_KEY=cec03debb916f66452494f11", "cec03debb916f66452494f11"],
  ['const SNYK_KEY = "0f5c8d3e-7a1b-4c2d-9e8f-6a5b4c3d2e1f"', "0f5c8d3e-7a1b-4c2d-9e8f-6a5b4c3d2e1f"],
  ["MAILGUN_KEY=d36870a94fff981a376418ce7e1aa658-0f3c2b1a-9e8d7c6b", "d36870a94fff981a376418ce7e1aa658"],
  ["airtableKey: c5hbnfcmq5hhbfdqq", "c5hbnfcmq5hhbfdqq"],
  // A secret that holds `${` and `}` without being a template's slot.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a `${` written as such, not a template literal
  ['api_key = "k9{{x}q)w${r]mz(tp[a>-_$#Lp2}}";', "k9{{x}q)w${r]mz(tp[a>-_$#Lp2}}"],
  // A secret name compared with a hard-coded literal; Make's `!=`.
  ['if (api_key != "Zx9Qw2Lk7Vb3Nm8Pq4Rt") {', "Zx9Qw2Lk7Vb3Nm8Pq4Rt"],
  ['if (password === "Summer2024!") return true;', "Summer2024!"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a `${` written as such, not a template literal
  ['if (secret == "k9{{x}q)w${r]mz(tp[a>-_$#Lp}}")', "k9{{x}q)w${r]mz(tp[a>-_$#Lp}}"],
  ["API_TOKEN != a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9", "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  // Provider formats: Amazon Bedrock API keys, ClickHouse Cloud secrets, Sourcegraph's local
  // tokens, Dynatrace in lower case, Harness, Flutterwave's encryption key, GitLab's session
  // cookie, an unsigned JWT (`alg: none`).
  [
    "[2025-03-02 10:11:12] INFO invoking model with ABSKQmVkcm9ja0FQSUtleS0xNzA5MjM0NTY3ODk6Qk9zQTRlTm1hVzNrYnZwV0xxR0R0aGJ3c0pLQ3Y5 (attempt 1/3)",
    "0xNzA5MjM0NTY3ODk6Qk9zQTRlTm1hVzNrYnZwV0xxR0R0aGJ3c0pLQ3Y5",
  ],
  [
    "here is the key you asked for: bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29tLz9BY3Rpb249Q2FsbFdpdGhCZWFyZXJUb2tlbiZYLUFtei1EYXRlPTIwMjUxMjAxVDAwMDAwMFo= (expires in 12h)",
    "LUFtei1EYXRlPTIwMjUxMjAxVDAwMDAwMFo",
  ],
  ["clickhouse: rotate to 4b1dXk9mP2vQ7zLmN3pQ5rS7tU9vW1xY3zA5bC7dE9 tonight", "Xk9mP2vQ7zLmN3pQ5rS7tU9vW1xY3zA5bC7dE9"],
  ["Error: 401 for sgp_local_0d697f54cb24238eefb29af05abf1b505e90950f on /.api/graphql", "0d697f54cb24238eefb29af05abf1b505e90950f"],
  [
    "dt0c01.st2ey72kqinmh574wmnvi7yn.g3dfpbejymodidaex454m7ywbuvefowkprvmwfass64nfh52px6bndvffm572rzm",
    "g3dfpbejymodidaex454m7ywbuvefowkprvmwfass64nfh52px6bndvffm572rzm",
  ],
  ["rotated pat.Kq8s7dLw3ZxP0vYt5Rb2Nm.Yt5Rb2Nm9Hc4Jf6Ga1Ue8WiP.Zx9Qw2Lk7Vb3Nm8Pq4Rt this morning", "Zx9Qw2Lk7Vb3Nm8Pq4Rt"],
  ["the encryption key is FLWSECK_TEST-5f2b8c9a1d3e for sandbox", "5f2b8c9a1d3e"],
  ["Cookie header kept in a note: _gitlab_session=94e7d2c1a0b3f4e5d6c7b8a9f0e1d2c3", "94e7d2c1a0b3f4e5d6c7b8a9f0e1d2c3"],
  [
    "replayed eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbi0yMDI1Iiwicm9sZSI6Im93bmVyIn0 against /admin",
    "eyJzdWIiOiJhZG1pbi0yMDI1Iiwicm9sZSI6Im93bmVyIn0",
  ],
  // A generated token in a URL's path with no provider's prefix; a cloud key whose `/` splits it
  // across the path's segments.
  ["curl -X POST https://hooks.example.com/services/Zx9Qw2Lk7Vb3Nm8Pq4RtYh6Jd0Fs/notify -d @body.json", "Zx9Qw2Lk7Vb3Nm8Pq4RtYh6Jd0Fs"],
  ["GET https://api.example.com/v1/share/Kq8s7dLw3ZxP0v-Yt5Rb2Nm9Hc4Jf6Ga1U 200", "Kq8s7dLw3ZxP0v-Yt5Rb2Nm9Hc4Jf6Ga1U"],
  ["curl https://api.example.com/keys/Kq8s7dLw3ZxP0v/Yt5Rb2Nm9Hc4Jf6Ga1Ue8Wi0O/rotate", "Yt5Rb2Nm9Hc4Jf6Ga1Ue8Wi0O"],
  // A dotenv file with snake_case names; one line of a generated value; a dotted value that is no host.
  ["db_host=db.internal\nservice_value=Xk9mP2vQ7zzLm\nlog_level=info", "Xk9mP2vQ7zzLm"],
  ["SERVICE_VALUE=a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9", "a8f3k2m9q7x4z1w6v5b0n3c8d2e7r4t9"],
  ["APP_NAME=shop\nSERVICE_VALUE=ab12cd.ef34gh56ij.kl78mn90op12", "kl78mn90op12"],
  // Webhook URLs written without their scheme, as configuration files and docs write them too.
  ["SLACK_URL=hooks.slack.com/services/T0123ABCD/B0123ABCD/aBcDeFgHiJkLmNoPqRsTuVwX", "aBcDeFgHiJkLmNoPqRsTuVwX"],
  ["notify: //hooks.slack.com/services/T0123ABCD/B0123ABCD/aBcDeFgHiJkLmNoPqRsTuVwX", "aBcDeFgHiJkLmNoPqRsTuVwX"],
  [
    "url: acme.webhook.office.com/webhookb2/0f5c8d3e-7a1b-4c2d-9e8f-6a5b4c3d2e1f@1a2b3c4d-1111-2222-3333-444455556666/IncomingWebhook/9f86d081884c7d659a2feaa0c55ad015/0f5c8d3e-7a1b-4c2d-9e8f-6a5b4c3d2e1f",
    "9f86d081884c7d659a2feaa0c55ad015",
  ],
  // Mastercard's 2-series (2221-2720), unseparated in a log line and printed in fours.
  ["[2025-03-02 10:11:12] INFO charging 2223003122003222 (attempt 1/3)", "2223003122003222"],
  ["card on file: 2223 0031 2200 3222", "2223 0031 2200 3222"],
];

/** Identifiers that share a provider token's prefix, and must not be taken for one (hand-written). */
export const PREFIX_KEEP: readonly string[] = [
  "npm_package_devDependencies__types_react=^18.2.0",
  "ghs_installation_token_for_repository_abc",
  "ii  mate-xapp-status-applet                  1.2.2-1                            amd64        XApp status applet",
  "see /usr/libexec/xapps/xapp-sn-watcher",
];

/** URLs whose `@` is no password's end: a port, a port's variable, a path, an IPv6 host (hand-written). */
export const URL_KEEP: readonly string[] = [
  "http://localhost:3000?email=bob@example.com",
  "https://example.com:443/api/v1/users/bob@example.com",
  "http://localhost:3000#/users/bob@example.com",
  "curl http://localhost:$PORT/users/bob@example.com",
  "file://C:/Users/me/node_modules/@types/node/index.d.ts",
  "http://[::1]:8080/api?email=bob@example.com",
  "at http://[::1]:5173/node_modules/.vite/deps/@tanstack_react-query.js:12:3",
  "http://[2001:db8::1]:443/users/bob@example.com",
];

/**
 * Lines nobody here wrote that earlier builds redacted: code, manifests and prose that name a
 * secret without holding one, each beside where it came from (a file of an installed package,
 * as it stood in `node_modules`, or a real command's output on this project's Debian machine).
 * Each must come back unchanged. (Their example credentials, such as `password: 'secret'` in a
 * README, are still taken: in that place a real one would stand.)
 */
export const THIRD_PARTY_KEEP: readonly (readonly [source: string, line: string])[] = [
  ["axe-core/axe.js", "pass: 'Abstract roles are not used',"],
  ["axe-core/locales/ja.json", '"pass": "抽象ロールは使用されていません",'],
  ["axe-core/axe.js", "var token = _step22.value;"],
  ["axe-core/axe.js", "var pass = b3.pass, fail = b3.fail;"],
  ["@modelcontextprotocol/sdk/dist/cjs/client/auth.js", 'const auth_js_1 = require("../shared/auth.js");'],
  ["@langchain/core/dist/utils/tiktoken.cjs", 'let js_tiktoken_lite = require("js-tiktoken/lite");'],
  ["readable-stream/readable.js", "exports.PassThrough = require('./lib/_stream_passthrough.js');"],
  ["@langchain/core/package.json", '"js-tiktoken": "^1.0.12",'],
  [".package-lock.json", '"cookie": "^0.7.1",'],
  [".package-lock.json", '"cookie-signature": "^1.2.1",'],
  ["@langchain/core/dist/utils/gateway.cjs", 'const LANGSMITH_API_KEY = "LANGSMITH_API_KEY";'],
  ["preact/debug/src/check-props.js", "const ReactPropTypesSecret = 'SECRET_DO_NOT_PASS_THIS_OR_YOU_WILL_BE_FIRED';"],
  [
    "@secretlint/core/src/messages/filter-mask-secrets.ts",
    '*       TOKEN: "TOKEN_STRING", // => replace all "TOKEN_STRING" with  `**********`.',
  ],
  ["zod/src/v4/classic/tests/string.test.ts", 'const signature = "signature"; // Placeholder for the signature'],
  ["langsmith/lib/sandbox/verify.js", 'exports.USER_TOKEN_HEADER = "X-Langsmith-User-Token";'],
  ["langsmith/lib/experimental/otel/constants.mjs", 'export const GEN_AI_SERIALIZED_SIGNATURE = "gen_ai.serialized.signature";'],
  ["@langchain/core/dist/runnables/history.cjs", "*         token: process.env.UPSTASH_REDIS_REST_TOKEN!,"],
  ["@secretlint/secretlint-rule-preset-recommend/module/index.js", "const password = result.groups?.password;"],
  ["pgpass/README.md", "conn_info.password = pass;"],
  [
    "typescript/vendor/vscode-jsonrpc/lib/common/connection.js",
    "token = cancellation_1.CancellationToken.is(params[numberOfParams]) ? params[numberOfParams] : undefined;",
  ],
  ["vitest/dist/chunks/acorn.B2iPLyUM.js", "var token = this$1$1.getToken();"],
  ["pg-protocol/src/parser.ts", "const secretKey = reader.int32()"],
  ["hono/dist/cjs/context.js", "const cookies = this.#res.headers.getSetCookie();"],
  ["pg-protocol/dist/messages.js", "exports.AuthenticationMD5Password = AuthenticationMD5Password;"],
  ["langsmith/lib/client.js", "profileAuth: !envAuthSet ? profileConfig.profileAuth : undefined,"],
  [
    "@modelcontextprotocol/sdk/dist/cjs/examples/client/elicitationUrlExample.js",
    "const OAUTH_CALLBACK_PORT = 8090; // Use different port than auth server (3001)",
  ],
  ["langsmith/lib/utils/profiles.js", "const TOKEN_REFRESH_TIMEOUT_MS = 10000;"],
  ["@typescript/typescript-linux-x64/lib/lib.webworker.d.ts", "readonly STENCIL_PASS_DEPTH_FAIL: 0x0B95;"],
  [
    "lightningcss/package.json",
    '"wasm:build": "cargo build --target wasm32-unknown-unknown -p lightningcss_node && wasm-opt target/wasm32-unknown-unknown/debug/lightningcss_node.wasm --asyncify --pass-arg=asyncify-imports@env.await_promise_sync -Oz -o wasm/lightningcss_node.wasm && node scripts/build-wasm.js",',
  ],
  [
    "@types/node/https.d.ts",
    '* headers: max-age=0; pin-sha256="WoiWRyIOVNa9ihaBciRSC7XHjliYS9VwUGOIud4PB18="; pin-sha256="RRM1dGqnDFsCJXBTHky16vi1obOlCgFFn/yOhI/y+ho=";',
  ],
  ["zod/src/v4/classic/tests/template-literal.test.ts", 'connectionString.parse("mongodb://host:1234/defaultauthdb?authSource=admin");'],
  [
    "zod/src/v4/classic/tests/string.test.ts",
    'expect(url.parse("   https://example.com?key=value   ")).toBe("https://example.com?key=value");',
  ],
  ["playwright-core/types/protocol.d.ts", "* Bit field representing pressed modifier keys. Alt=1, Ctrl=2, Meta/Command=4, Shift=8"],
  ["vitest/dist/chunks/cli-api.B0Pz1_R7.js", "for (let token of jsTokens$1(text, { jsx })) {"],
  [
    "vitest/dist/chunks/cli-api.B0Pz1_R7.js",
    "for (const key of keys1) if (!keys2.includes(key) || !deepEqual(obj1[key], obj2[key])) return false;",
  ],
  [
    "@secretlint/secretlint-rule-preset-recommend/module/index.js",
    "* - Minimum 100: Heuristically excludes short placeholders (smallest real key ECDSA-256 ≈ 288 chars)",
  ],
  ["pg-protocol/dist/outbound-serializer.test.js", "// Guards the single-pass addInt32PrefixedString write path: the Int32"],
  ["shell-quote/README.md", "var xs = parse('beep --boop=\"$PWD\"', { PWD: '/home/robot' });"],
  ["`dpkg -l` (Debian 12)", "ii  libsecret-1-0:amd64                       0.20.5-3                            amd64        Secret store"],
  [
    "`dpkg -l` (Debian 12)",
    "ii  passwd                                    1:4.13+dfsg1-1+deb12u1              amd64        change and administer password and group data",
  ],
  ["`curl --help all` (curl 7.88.1)", " -u, --user <user:password> Server user and password"],
  ["`npm help-search token` (npm 11)", "npm help token                                                          token:56"],
  ["/usr/share/postgresql/15/postgresql.conf.sample", "#password_encryption = scram-sha-256\t# scram-sha-256 or md5"],
];

/** Ordinary developer text that must come back unchanged. */
export const KEEP_FIXTURES: readonly string[] = [
  // `pw` first or alone is Playwright's as often as a password: code and words stay.
  'const pw = require("playwright");',
  "const pw = await chromium.launch({ headless: true });",
  "PW_TEST_HTML_REPORT_OPEN=never npx playwright test",
  "pw: 'all checks passed'",
  'echo "deb http://deb.example.org/ stable main" | sudo tee /etc/apt/sources.list.d/x.list',
  "echo 1 | sudo tee /proc/sys/vm/drop_caches",
  "echo $SUDO_PASSWORD | sudo -S ls",
  "    at verifyToken (/app/src/auth/jwt.ts:42:11)",
  "    at getApiKey (/srv/app/node_modules/@acme/sdk/dist/index.js:118:23)",
  "    at Object.refreshSecret (file:///home/dev/proj/src/secrets.mjs:7:5)",
  "    at async rotateKey (/app/src/keys/rotate.ts:88:3)",
  '  { key: "user-list-item-3f7868", label: "Alice" }',
  'const cacheKey = "v1-deps-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"',
  "order 4111111111111111 shipped",
  "trace id 4532015112830366 in span",
  'import "sk-learn-compat-layer-v2-transforms"',
  "pip install sk-learn-compat-layer-v2-2024",
  // Beside the held-out shapes: what they must leave.
  "PORT=8080\nNODE_ENV=production\nLOG_LEVEL=info\nDEBUG=false\nAWS_REGION=eu-west-1",
  "# .env\nDB_HOST=db.internal:5432\nPUBLIC_URL=https://app.example.com\nADMIN_EMAIL=ops@example.com\nDATA_DIR=/var/lib/app\nTIMEOUT=30s\nAPI_BASE=$PUBLIC_URL/api\nVERSION=2.4.1",
  'let tokenType: string = "Bearer";\nlet passwordField: string = "#password";',
  "var token string = getToken()",
  'const secret: string = process.env.SECRET ?? "";',
  "var CAT_FROM_HELM = [ [ .9999570254019492, -2071874272730964e-20, 1490098223546482e-20 ] ];",
  "request id 4111111111111111 took 12ms",
  "Float64: 4503599627370496n is 2^52",
  "const NavigationItemSelectedListener = 'TmF2aWdhdGlvbkl0ZW1TZWxlY3RlZExpc3RlbmVy';",
  "expect(isBase64('UGF0aWVuY2UgaXMgdGhlIGtleSB0byBzdWNjZXNz')).toBe(true)",
  "see node_modules/typescript/lib/lib.es2015.d.ts and commit b8c8f08b02b7f8a0e2498de823b950bdef769a5b",
  "the function getElementsByTagNameNSWithShadowRoot2 returns",
  "<description>\n  Build and test the project\n</description>",
  // Beside the held-out measurement's fixes: what they must leave.
  "docker run -u 1000:1000 -v $PWD:/src app:1.4.2",
  'curl -sL --user "$1:$2" "$3" > "$4"',
  "curl -u admin: https://ci.example.com/api/json",
  'const CACHE_KEY = "5eb4223e-5008-46e5-be67-c7b8f2732305";',
  'const THEME_KEY = "user2profile3settings";',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a `${` written as such, not a template literal
  "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a `${` written as such, not a template literal
  'deploy: { token: "${{ secrets.DEPLOY_TOKEN }}", password: "{{ .Values.db.password | b64enc }}" }',
  'if (lastSignificantToken === "?NonExpressionParenKeyword") stack.push(x);',
  'if (token !== "undefined" && tokenKind === "Bearer") use(token);',
  "API_TOKEN != cat .token",
  "See https://docs.google.com/document/d/1U1RGAehQwRypUTovF1KRlpiOFze0b-_2gc6fAH0KY0k/edit",
  "https://acme.notion.site/Roadmap-Q3-Planning-1bc826ecc0994dd8915be97fc3489cde?pvs=74",
  "https://fonts.gstatic.com/s/roboto/v30/KFOmCnqEu92Fr1Mu4mxKKTU1Kg.woff2",
  "https://example.com/users/AdminSettingsPage/v2/ProfileOverviewList",
  "primaryKey=Xk9mP2vQ7zzLmW3nR8tY1a",
  "requests==2.31.0\nurllib3==2.0.7\ncertifi==2024.2.2",
  "host=db.internal\nport=5432\nuser=app",
  "order 2223003122003222 shipped",
  "Auth: Bearer required for v2 endpoints",
  "Incoming webhooks post to hooks.slack.com; see https://api.slack.com/messaging/webhooks",
  // A provider's format filled with one character is an example; an identifier after `hf_`, a
  // hashed asset's `.ico-`, and what is published (`public_key`) hold no secret.
  "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
  "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
  'SLACK_BOT_TOKEN="xoxb-xxxxxxxxxxx-xxxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx"',
  "- (id)hf_preferredContentSizeCategoryForDisplayName;",
  "http://assets.example.com/media/video_box.ico-7a388b69018576d24b59331fd60aab0c.png",
  'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
  'STRIPE_PUBLISHABLE_KEY = "pk_live_51HqYxKJr8sN2mB4vW9zT6cE3aL0pQ7uY"',
];
