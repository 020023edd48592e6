package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// ---------------------------------------------------------------- virtflow_load_balancer

type listenerModel struct {
	Port       types.Int64  `tfsdk:"port"`
	Protocol   types.String `tfsdk:"protocol"`
	TargetPort types.Int64  `tfsdk:"target_port"`
}

type loadBalancerModel struct {
	ID                    types.String    `tfsdk:"id"`
	Name                  types.String    `tfsdk:"name"`
	TenantID              types.String    `tfsdk:"tenant_id"`
	RegionServiceID       types.String    `tfsdk:"region_service_id"`
	VipID                 types.String    `tfsdk:"vip_id"`
	VipAddress            types.String    `tfsdk:"vip_address"`
	Algorithm             types.String    `tfsdk:"algorithm"`
	Listeners             []listenerModel `tfsdk:"listeners"`
	HealthCheckIntervalMs types.Int64     `tfsdk:"health_check_interval_ms"`
	Status                types.String    `tfsdk:"status"`
}

func (m *loadBalancerModel) set(f *apiclient.LoadBalancerFields) {
	m.ID, m.Name, m.TenantID = types.StringValue(f.Id), types.StringValue(f.Name), types.StringValue(f.Tenant.Id)
	m.RegionServiceID = ref(f.RegionService)
	m.VipID, m.VipAddress = types.StringNull(), types.StringNull()
	if f.Vip != nil {
		m.VipID, m.VipAddress = types.StringValue(f.Vip.Id), types.StringValue(f.Vip.Address)
	}
	m.Algorithm, m.HealthCheckIntervalMs = types.StringValue(string(f.Algorithm)), types.Int64Value(int64(f.HealthCheckIntervalMs))
	m.Listeners = nil
	for _, l := range f.Listeners {
		m.Listeners = append(m.Listeners, listenerModel{Port: types.Int64Value(int64(l.Port)), Protocol: types.StringValue(l.Protocol), TargetPort: types.Int64Value(int64(l.TargetPort))})
	}
	m.Status = types.StringValue(string(f.Status))
}

func listenerInputs(ls []listenerModel) []apiclient.LoadBalancerListenerInput {
	out := make([]apiclient.LoadBalancerListenerInput, 0, len(ls))
	for _, l := range ls {
		p := "TCP"
		if !l.Protocol.IsNull() && !l.Protocol.IsUnknown() {
			p = l.Protocol.ValueString()
		}
		out = append(out, apiclient.LoadBalancerListenerInput{Port: int(l.Port.ValueInt64()), Protocol: p, TargetPort: int(l.TargetPort.ValueInt64())})
	}
	return out
}

func loadBalancerResource() resource.Resource {
	return newResource(crud[loadBalancerModel]{
		name: "load_balancer",
		schema: schema.Schema{Description: "A load balancer: its VIP's listeners forward to the replicas of its region service, " +
			"checked every health_check_interval_ms. A load-balanced region service creates one; import it by id to manage its listeners.",
			Attributes: map[string]schema.Attribute{
				"id":                idAttribute(),
				"name":              stringAttr("Name.", required),
				"tenant_id":         stringAttr("The tenant.", required, replace),
				"region_service_id": stringAttr("The region service whose replicas are the members.", optional, replace),
				"vip_id":            stringAttr("The VIP (an IP address of a SERVICE network).", optional, computed, replace),
				"vip_address":       stringAttr("The VIP's address.", computed),
				"algorithm":         stringAttr("ROUND_ROBIN, LEAST_CONNECTIONS or SOURCE_HASH.", optional, computed),
				"listeners": schema.ListNestedAttribute{Optional: true,
					Description: "The ports the VIP accepts (TCP: L4, HTTP: L7) and the members' ports they forward to.",
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"port":        intAttr("Port of the VIP.", required),
						"protocol":    stringAttr("TCP or HTTP.", required),
						"target_port": intAttr("Port of the members.", required),
					}}},
				"health_check_interval_ms": intAttr("How often every member is checked (default 1000).", optional, computed),
				"status":                   statusAttr("ACTIVE only while a node announces the VIP and forwards."),
			}},
		fields: map[string]string{"healthCheckIntervalMs": "health_check_interval_ms", "vipID": "vip_id"},
		id:     func(m *loadBalancerModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *loadBalancerModel) error {
			r, err := apiclient.CreateLoadBalancer(ctx, c, apiclient.CreateLoadBalancerInput{Name: m.Name.ValueString(), TenantID: m.TenantID.ValueString(),
				RegionServiceID: strPtr(m.RegionServiceID), VipID: strPtr(m.VipID), Algorithm: enumPtr[apiclient.LoadBalancerAlgorithm](m.Algorithm),
				Listeners: listenerInputs(m.Listeners), HealthCheckIntervalMs: intPtr(m.HealthCheckIntervalMs)})
			if err != nil {
				return err
			}
			m.set(&r.CreateLoadBalancer.LoadBalancerFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *loadBalancerModel) (bool, error) {
			r, err := apiclient.GetLoadBalancer(ctx, c, m.ID.ValueString())
			if err != nil || r.Node == nil {
				return false, err
			}
			lb, ok := (*r.Node).(*apiclient.GetLoadBalancerNodeLoadBalancer)
			if !ok {
				return false, nil
			}
			m.set(&lb.LoadBalancerFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *loadBalancerModel) error {
			in := apiclient.UpdateLoadBalancerInput{Name: strPtr(p.Name), Algorithm: enumPtr[apiclient.LoadBalancerAlgorithm](p.Algorithm),
				HealthCheckIntervalMs: intPtr(p.HealthCheckIntervalMs)}
			if len(p.Listeners) == 0 {
				t := true
				in.ClearListeners = &t
			} else {
				in.Listeners = listenerInputs(p.Listeners)
			}
			r, err := apiclient.UpdateLoadBalancer(ctx, c, s.ID.ValueString(), in)
			if err != nil {
				return err
			}
			p.set(&r.UpdateLoadBalancer.LoadBalancerFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *loadBalancerModel) error {
			_, err := apiclient.DeleteLoadBalancer(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_global_service

type globalServiceModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	Description      types.String `tfsdk:"description"`
	TenantID         types.String `tfsdk:"tenant_id"`
	Mode             types.String `tfsdk:"mode"`
	Fqdn             types.String `tfsdk:"fqdn"`
	TTL              types.Int64  `tfsdk:"ttl"`
	RegionServiceIDs types.Set    `tfsdk:"region_service_ids"`
	Status           types.String `tfsdk:"status"`
}

func (m *globalServiceModel) set(f *apiclient.GlobalServiceFields) {
	m.ID, m.Name, m.Description, m.TenantID = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description), types.StringValue(f.Tenant.Id)
	m.Mode, m.Fqdn, m.TTL = types.StringValue(string(f.Mode)), str(f.Fqdn), types.Int64Value(int64(f.Ttl))
	ids := make([]string, 0, len(f.RegionServices.Edges))
	for _, e := range f.RegionServices.Edges {
		if e != nil && e.Node != nil {
			ids = append(ids, e.Node.Id)
		}
	}
	m.RegionServiceIDs, m.Status = stringsSet(ids), types.StringValue(string(f.Status))
}

// diffIDs returns what to add to have and what to remove from it to reach want.
func diffIDs(want, have []string) (add, remove []string) {
	in := map[string]bool{}
	for _, id := range have {
		in[id] = true
	}
	keep := map[string]bool{}
	for _, id := range want {
		keep[id] = true
		if !in[id] {
			add = append(add, id)
		}
	}
	for _, id := range have {
		if !keep[id] {
			remove = append(remove, id)
		}
	}
	return add, remove
}

func globalServiceResource() resource.Resource {
	return newResource(crud[globalServiceModel]{
		name: "global_service",
		schema: schema.Schema{Description: "A global service joins region services of several regions: GSLB answers fqdn with the healthy " +
			"members' VIPs (ttl seconds), ANYCAST announces one VIP from every region. Removing a region service from " +
			"region_service_ids closes that region.", Attributes: map[string]schema.Attribute{
			"id":                 idAttribute(),
			"name":               stringAttr("Name.", required),
			"description":        stringAttr(""),
			"tenant_id":          stringAttr("The tenant.", required, replace),
			"mode":               stringAttr("GSLB or ANYCAST.", optional, computed),
			"fqdn":               stringAttr("The DNS name GSLB answers (in the operator's GSLB zone)."),
			"ttl":                intAttr("Seconds resolvers may cache the answer (default 30).", optional, computed),
			"region_service_ids": idSetAttr("The member region services.", optional, computed),
			"status":             statusAttr("ACTIVE while served by at least one healthy region."),
		}},
		fields: map[string]string{"regionServiceIDs": "region_service_ids", "addRegionServiceIDs": "region_service_ids", "removeRegionServiceIDs": "region_service_ids"},
		id:     func(m *globalServiceModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *globalServiceModel) error {
			r, err := apiclient.CreateGlobalService(ctx, c, apiclient.CreateGlobalServiceInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				TenantID: m.TenantID.ValueString(), Mode: enumPtr[apiclient.GlobalServiceMode](m.Mode), Fqdn: strPtr(m.Fqdn), Ttl: intPtr(m.TTL),
				RegionServiceIDs: stringSet(ctx, m.RegionServiceIDs)})
			if err != nil {
				return err
			}
			m.set(&r.CreateGlobalService.GlobalServiceFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *globalServiceModel) (bool, error) {
			r, err := apiclient.GetGlobalService(ctx, c, m.ID.ValueString())
			if err != nil || r.Node == nil {
				return false, err
			}
			g, ok := (*r.Node).(*apiclient.GetGlobalServiceNodeGlobalService)
			if !ok {
				return false, nil
			}
			m.set(&g.GlobalServiceFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *globalServiceModel) error {
			in := apiclient.UpdateGlobalServiceInput{Name: strPtr(p.Name), Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				Mode: enumPtr[apiclient.GlobalServiceMode](p.Mode), Fqdn: strPtr(p.Fqdn), ClearFqdn: clear(p.Fqdn, s.Fqdn), Ttl: intPtr(p.TTL)}
			if !p.RegionServiceIDs.IsUnknown() {
				in.AddRegionServiceIDs, in.RemoveRegionServiceIDs = diffIDs(stringSet(ctx, p.RegionServiceIDs), stringSet(ctx, s.RegionServiceIDs))
			}
			r, err := apiclient.UpdateGlobalService(ctx, c, s.ID.ValueString(), in)
			if err != nil {
				return err
			}
			p.set(&r.UpdateGlobalService.GlobalServiceFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *globalServiceModel) error {
			// The API refuses to delete a global service that still has members: detach them first.
			t := true
			if _, err := apiclient.UpdateGlobalService(ctx, c, s.ID.ValueString(), apiclient.UpdateGlobalServiceInput{ClearRegionServices: &t}); err != nil {
				return err
			}
			_, err := apiclient.DeleteGlobalService(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// statusAttr is a status the traffic loop moves on its own: unknown in a plan that changes the
// object (the apply reads it), never a diff by itself.
func statusAttr(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: desc}
}
