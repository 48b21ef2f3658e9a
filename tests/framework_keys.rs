//! Keys that web frameworks write into configuration: each in the shape
//! the framework's own generator gives it, found at its exact place.

mod common;

use common::Tree;

/// `n` bytes of a fixed pseudo-random sequence, as upper-case hex.
fn hex(seed: u64, n: usize) -> String {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            format!("{:02X}", state as u8)
        })
        .collect()
}

/// `path:line:column:end_column rule` of every finding.
fn found(t: &Tree) -> Vec<String> {
    t.run(&["scan", "--format", "json"]).expect(1).found()
}

/// An ASP.NET `<machineKey>` with its keys written out (IIS Manager's
/// "Generate Keys"): hex validation and decryption keys, which sign and
/// encrypt ViewState. Neither was reported (exit 0).
#[test]
fn an_aspnet_machine_key_is_found() {
    let (validation, decryption) = (hex(0x9e37_79b9, 64), hex(0x7f4a_7c15, 32));
    let t = Tree::new();
    t.write(
        "Web.config",
        format!(
            "<configuration>\n  <system.web>\n    <machineKey validationKey=\"{validation}\"\n                decryptionKey=\"{decryption}\"\n                validation=\"HMACSHA256\" decryption=\"AES\" />\n  </system.web>\n</configuration>\n"
        ),
    );
    t.write(
        "Other.config",
        "<machineKey validationKey=\"AutoGenerate,IsolateApps\" decryptionKey=\"AutoGenerate,IsolateApps\" />\n",
    );
    assert_eq!(
        found(&t),
        [
            "Web.config:3:32:160 aspnet-machine-key",
            "Web.config:4:32:96 aspnet-machine-key",
        ]
    );
}

/// A Phoenix endpoint's `secret_key_base` as `mix phx.gen.secret` makes it
/// (64 characters of base64, no padding), in `config/prod.secret.exs` and
/// in a release's environment. Only Rails's 128 hex had a rule: neither
/// was reported (exit 0).
#[test]
fn a_phoenix_secret_key_base_is_found() {
    use base64::Engine as _;
    let bytes: Vec<u8> = (0..48).map(|i| (i * 89 + 17) as u8).collect();
    let secret = base64::engine::general_purpose::STANDARD.encode(bytes);
    assert_eq!(secret.len(), 64);
    let t = Tree::new();
    t.write(
        "config/prod.secret.exs",
        format!(
            "import Config\n\nconfig :shop, ShopWeb.Endpoint,\n  secret_key_base: \"{secret}\"\n"
        ),
    );
    t.write("rel/env.sh", format!("export SECRET_KEY_BASE={secret}\n"));
    assert_eq!(
        found(&t),
        [
            "config/prod.secret.exs:4:21:85 phoenix-secret-key-base",
            "rel/env.sh:1:24:88 phoenix-secret-key-base",
        ]
    );
}
