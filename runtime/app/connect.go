package app

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
)

// connectBus starts the embedded server (alone or clustered) or dials the
// external deployment, and returns the connection and how many servers it
// knows of. It does not wait for JetStream: Start does (boot.go).
func (a *App) connectBus(cfg Config, log *slog.Logger) (*bus.Conn, int, error) {
	if cfg.NATS.External() {
		nc, err := bus.Dial(context.Background(), bus.ClientConfig{
			URLs: cfg.NATS.URL, Creds: cfg.NATS.Creds, NKey: cfg.NATS.NKey,
			User: cfg.NATS.User, Password: cfg.NATS.Password, Token: cfg.NATS.ClientToken,
			TLSCA: cfg.NATS.TLSCA, TLSCert: cfg.NATS.TLSCert, TLSKey: cfg.NATS.TLSKey,
			Name: "sentinel " + cfg.Node.Name,
		})
		if err != nil {
			return nil, 0, err
		}
		a.push("nats connection", func(context.Context) error { nc.Close(); return nil })
		return nc, bus.ServerCount(nc), nil
	}
	ncfg := cfg.NATS.Config
	ncfg.ServerName = cfg.Node.Name
	if ncfg.StoreDir == "" {
		ncfg.StoreDir = filepath.Join(cfg.Home, StoreDir)
	}
	if ncfg.Listen != "" && ncfg.ListenToken == "" {
		tok, err := loadOrCreateSecret(cfg.Home, NATSTokenFile)
		if err != nil {
			return nil, 0, err
		}
		ncfg.ListenToken = tok
	}
	if cfg.Cluster.Clustered() {
		tok, err := a.routeToken(cfg)
		if err != nil {
			return nil, 0, err
		}
		ncfg.Cluster = embedded.Cluster{Name: cfg.Cluster.Name, Listen: cfg.Cluster.Listen, Routes: cfg.Cluster.Routes,
			Token: tok, Advertise: cfg.Cluster.Advertise, TLSCert: cfg.Cluster.TLSCert, TLSKey: cfg.Cluster.TLSKey, TLSCA: cfg.Cluster.TLSCA}
	}
	srv, err := embedded.Start(ncfg, log.With("component", "nats"))
	if err != nil {
		return nil, 0, err
	}
	a.nats = srv
	a.push("embedded nats-server", func(context.Context) error { srv.Shutdown(); return nil })
	nc, err := srv.Connect("sentinel " + cfg.Node.Name)
	if err != nil {
		return nil, 0, err
	}
	a.push("nats connection", func(context.Context) error { nc.Close(); return nil })
	return nc, 1, nil
}

// NATSConn is the node's own client connection (the one its bus runs on),
// for tools and tests that publish or subscribe beside the node.
func (a *App) NATSConn() *bus.Conn { return a.nc }
