{
  description = "Workspace API: development shell with Node.js, PostgreSQL and Redis";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in {
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = [ pkgs.nodejs_20 pkgs.postgresql_17 pkgs.redis ];
          shellHook = ''
            echo "Node $(node --version), PostgreSQL $(postgres --version | cut -d' ' -f3), Redis $(redis-server --version | cut -d' ' -f3 | cut -d= -f2)"
          '';
        };
      });
    };
}
