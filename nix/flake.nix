{
  description = "Agents of Empires guest (NixOS), the same guest as aoe_tui's Debian image";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";

  outputs = { self, nixpkgs }:
    let
      system = "x86_64-linux";
      guest = name: nixpkgs.lib.nixosSystem {
        inherit system;
        modules = [
          self.nixosModules.aoe-guest
          { networking.hostName = name; }
        ];
      };
    in
    {
      nixosModules.aoe-guest = import ./guest.nix;

      # `nix build ./nix#nixosConfigurations.guest.config.system.build.vm`
      nixosConfigurations = {
        guest = guest "aoe-guest";
        builder-one = guest "builder-one";
        builder-two = guest "builder-two";
        builder-three = guest "builder-three";
      };
    };
}
