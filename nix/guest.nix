# The Agents of Empires guest as a NixOS module: the same contract as the
# Debian image that `aoe image build` makes (aoe_tui/runtime/guest_recipe.py).
# sshd with root key login only, DHCP on the user-mode NIC, the packages agents
# expect, and the dormant, enabled slot unit builder-app.service.
{ config, lib, pkgs, ... }:

let
  cfg = config.aoe.guest;
in
{
  options.aoe.guest = {
    authorizedKeys = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      description = ''
        Extra public keys for root. Normally empty: the referee passes the
        per-match key as the systemd credential ssh.authorized_keys.root.
      '';
    };
    servicePort = lib.mkOption {
      type = lib.types.port;
      default = 8080;
      description = "Port the agent's service listens on inside the guest.";
    };
  };

  config = {
    system.stateVersion = "24.05";
    boot.kernelParams = [ "console=ttyS0" ];
    networking.hostName = lib.mkDefault "aoe-guest";
    networking.useDHCP = lib.mkDefault true;
    networking.firewall.allowedTCPPorts = [ 22 cfg.servicePort ];

    services.openssh = {
      enable = true;
      hostKeys = [ { path = "/etc/ssh/ssh_host_ed25519_key"; type = "ed25519"; } ];
      settings = {
        PermitRootLogin = "prohibit-password";
        PasswordAuthentication = false;
        KbdInteractiveAuthentication = false;
        UseDns = false;
      };
    };
    users.users.root.openssh.authorizedKeys.keys = cfg.authorizedKeys;
    users.mutableUsers = false;

    environment.systemPackages = with pkgs; [ python3 sqlite curl jq procps iproute2 ];

    systemd.tmpfiles.rules = [ "d /opt/builder 0755 root root -" ];

    # Dormant until an agent writes the app; no start limit so a crashing app
    # keeps being retried instead of locking the unit in "failed".
    systemd.services.builder-app = {
      description = "Agents of Empires builder slot (the agent's service)";
      wantedBy = [ "multi-user.target" ];
      wants = [ "network-online.target" ];
      after = [ "network-online.target" ];
      unitConfig = {
        ConditionPathExists = "/opt/builder/app.py";
        StartLimitIntervalSec = 0;
      };
      serviceConfig = {
        ExecStart = "${pkgs.python3}/bin/python3 /opt/builder/app.py";
        WorkingDirectory = "/opt/builder";
        Restart = "always";
        RestartSec = 1;
      };
    };

    # Nothing periodic competes with the agent for a slow emulated CPU.
    nix.gc.automatic = false;
    documentation.enable = false;
  };
}
