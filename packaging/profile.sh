# /etc/profile.d/shoal.sh (shoal package): local users reach this node's
# agent over its socket, as themselves and with no token. The shoal CLI
# finds /run/shoal/shoal.sock by itself when no address and no token are
# given; this also tells scripts and older CLIs where it is. Root keeps
# the default TCP address, which its token (SHOAL_TOKEN_FILE) goes with;
# a value already set is left alone.
if [ -z "${SHOAL_ADDR-}" ] && [ -S /run/shoal/shoal.sock ] && [ "$(id -u)" != 0 ]; then
	SHOAL_ADDR=unix:///run/shoal/shoal.sock
	export SHOAL_ADDR
fi
