package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// ---------------------------------------------------------------- virtflow_tenant

type tenantModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	DisplayName types.String `tfsdk:"display_name"`
	Description types.String `tfsdk:"description"`
	Status      types.String `tfsdk:"status"`
}

func (m *tenantModel) set(f *apiclient.TenantFields) {
	m.ID, m.Name, m.DisplayName, m.Description = types.StringValue(f.Id), types.StringValue(f.Name), str(f.DisplayName), str(f.Description)
	m.Status = types.StringValue(string(f.Status))
}

func tenantResource() resource.Resource {
	return newResource(crud[tenantModel]{
		name: "tenant",
		schema: schema.Schema{Description: "A tenant: an isolated customer of the platform.", Attributes: map[string]schema.Attribute{
			"id":           idAttribute(),
			"name":         stringAttr("Unique name.", required),
			"display_name": stringAttr("Name shown to people."),
			"description":  stringAttr(""),
			"status":       stringAttr("ACTIVE or SUSPENDED (default ACTIVE).", optional, computed),
		}},
		fields: map[string]string{"displayName": "display_name"},
		id:     func(m *tenantModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *tenantModel) error {
			r, err := apiclient.CreateTenant(ctx, c, apiclient.CreateTenantInput{Name: m.Name.ValueString(),
				DisplayName: strPtr(m.DisplayName), Description: strPtr(m.Description), Status: enumPtr[apiclient.TenantStatus](m.Status)})
			if err != nil {
				return err
			}
			m.set(&r.CreateTenant.TenantFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *tenantModel) (bool, error) {
			r, err := apiclient.GetTenant(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Tenants.Edges) == 0 || r.Tenants.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Tenants.Edges[0].Node.TenantFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *tenantModel) error {
			r, err := apiclient.UpdateTenant(ctx, c, s.ID.ValueString(), apiclient.UpdateTenantInput{Name: strPtr(p.Name),
				DisplayName: strPtr(p.DisplayName), ClearDisplayName: clear(p.DisplayName, s.DisplayName),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				Status: enumPtr[apiclient.TenantStatus](p.Status)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateTenant.TenantFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *tenantModel) error {
			_, err := apiclient.DeleteTenant(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_quota

type quotaModel struct {
	ID          types.String  `tfsdk:"id"`
	TenantID    types.String  `tfsdk:"tenant_id"`
	HostGroupID types.String  `tfsdk:"host_group_id"`
	CPUPercent  types.Float64 `tfsdk:"cpu_percent"`
	VCPUs       types.Int64   `tfsdk:"vcpus"`
	MemoryMB    types.Int64   `tfsdk:"memory_mb"`
	StorageGB   types.Int64   `tfsdk:"storage_gb"`
}

func (m *quotaModel) set(f *apiclient.QuotaFields) {
	m.ID, m.TenantID, m.HostGroupID = types.StringValue(f.Id), types.StringValue(f.Tenant.Id), types.StringValue(f.HostGroup.Id)
	m.CPUPercent, m.VCPUs = types.Float64Value(f.CpuPercent), types.Int64Value(int64(f.Vcpus))
	m.MemoryMB, m.StorageGB = types.Int64Value(int64(f.MemoryMB)), types.Int64Value(int64(f.StorageGB))
}

func quotaResource() resource.Resource {
	return newResource(crud[quotaModel]{
		name: "quota",
		schema: schema.Schema{Description: "A tenant's quota in a host group (0 means unlimited).", Attributes: map[string]schema.Attribute{
			"id":            idAttribute(),
			"tenant_id":     stringAttr("The tenant.", required, replace),
			"host_group_id": stringAttr("The host group.", required, replace),
			"cpu_percent":   floatAttr("Share of the host group's cores, 0..100.", optional, computed),
			"vcpus":         intAttr("vCPUs.", optional, computed),
			"memory_mb":     intAttr("Memory in MB.", optional, computed),
			"storage_gb":    intAttr("Storage in GB.", optional, computed),
		}},
		id: func(m *quotaModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *quotaModel) error {
			r, err := apiclient.CreateQuota(ctx, c, apiclient.CreateQuotaInput{TenantID: m.TenantID.ValueString(), HostGroupID: m.HostGroupID.ValueString(),
				CpuPercent: floatPtr(m.CPUPercent), Vcpus: intPtr(m.VCPUs), MemoryMB: intPtr(m.MemoryMB), StorageGB: intPtr(m.StorageGB)})
			if err != nil {
				return err
			}
			m.set(&r.CreateQuota.QuotaFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *quotaModel) (bool, error) {
			r, err := apiclient.GetQuota(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Quotas.Edges) == 0 || r.Quotas.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Quotas.Edges[0].Node.QuotaFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *quotaModel) error {
			r, err := apiclient.UpdateQuota(ctx, c, s.ID.ValueString(), apiclient.UpdateQuotaInput{
				CpuPercent: floatPtr(p.CPUPercent), Vcpus: intPtr(p.VCPUs), MemoryMB: intPtr(p.MemoryMB), StorageGB: intPtr(p.StorageGB)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateQuota.QuotaFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *quotaModel) error {
			_, err := apiclient.DeleteQuota(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_network

type networkModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Description  types.String `tfsdk:"description"`
	CIDR         types.String `tfsdk:"cidr"`
	VLAN         types.Int64  `tfsdk:"vlan"`
	Gateway      types.String `tfsdk:"gateway"`
	Purpose      types.String `tfsdk:"purpose"`
	DNSServers   types.List   `tfsdk:"dns_servers"`
	TenantID     types.String `tfsdk:"tenant_id"`
	DatacenterID types.String `tfsdk:"datacenter_id"`
}

func (m *networkModel) set(f *apiclient.NetworkFields) {
	m.ID, m.Name, m.Description, m.CIDR = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description), types.StringValue(f.Cidr)
	m.VLAN, m.Gateway, m.Purpose = intv(f.Vlan), str(f.Gateway), types.StringValue(string(f.Purpose))
	m.DNSServers = stringsList(f.DnsServers)
	if len(f.DnsServers) == 0 {
		m.DNSServers = stringsList(nil)
	}
	m.TenantID, m.DatacenterID = ref(f.Tenant), ref(f.Datacenter)
}

var networkAttributes = map[string]schema.Attribute{
	"id":            idAttribute(),
	"name":          stringAttr("Unique name.", required),
	"description":   stringAttr(""),
	"cidr":          stringAttr("Prefix in CIDR notation, e.g. 10.1.0.0/24.", required, replace),
	"vlan":          intAttr("VLAN id."),
	"gateway":       stringAttr("Gateway address (never allocated)."),
	"purpose":       stringAttr("MANAGEMENT, SERVICE, VM or STORAGE.", optional, computed),
	"dns_servers":   schema.ListAttribute{ElementType: types.StringType, Optional: true, Description: "Name servers a VM on the network is told to use."},
	"tenant_id":     stringAttr("The tenant owning the network (none: shared).", optional, replace),
	"datacenter_id": stringAttr("The datacenter.", optional, replace),
}

func networkResource() resource.Resource {
	return newResource(crud[networkModel]{
		name:   "network",
		schema: schema.Schema{Description: "An IP network (a prefix) from which addresses are allocated.", Attributes: networkAttributes},
		fields: map[string]string{"dnsServers": "dns_servers", "cidr": "cidr"},
		id:     func(m *networkModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *networkModel) error {
			r, err := apiclient.CreateNetwork(ctx, c, apiclient.CreateNetworkInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				Cidr: m.CIDR.ValueString(), Vlan: intPtr(m.VLAN), Gateway: strPtr(m.Gateway), Purpose: enumPtr[apiclient.NetworkPurpose](m.Purpose),
				DnsServers: stringList(ctx, m.DNSServers), TenantID: strPtr(m.TenantID), DatacenterID: strPtr(m.DatacenterID)})
			if err != nil {
				return err
			}
			m.set(&r.CreateNetwork.NetworkFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *networkModel) (bool, error) {
			r, err := apiclient.GetNetwork(ctx, c, m.ID.ValueString())
			if err != nil || len(r.Networks.Edges) == 0 || r.Networks.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.Networks.Edges[0].Node.NetworkFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *networkModel) error {
			in := apiclient.UpdateNetworkInput{Name: strPtr(p.Name), Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				Vlan: intPtr(p.VLAN), ClearVlan: clear(p.VLAN, s.VLAN), Gateway: strPtr(p.Gateway), ClearGateway: clear(p.Gateway, s.Gateway),
				Purpose: enumPtr[apiclient.NetworkPurpose](p.Purpose), DnsServers: stringList(ctx, p.DNSServers), ClearDNSServers: clear(p.DNSServers, s.DNSServers)}
			r, err := apiclient.UpdateNetwork(ctx, c, s.ID.ValueString(), in)
			if err != nil {
				return err
			}
			p.set(&r.UpdateNetwork.NetworkFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *networkModel) error {
			_, err := apiclient.DeleteNetwork(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_ip_address

type ipAddressModel struct {
	ID          types.String `tfsdk:"id"`
	NetworkID   types.String `tfsdk:"network_id"`
	Address     types.String `tfsdk:"address"`
	Status      types.String `tfsdk:"status"`
	DNSName     types.String `tfsdk:"dns_name"`
	Description types.String `tfsdk:"description"`
	PortID      types.String `tfsdk:"port_id"`
}

func (m *ipAddressModel) set(f *apiclient.IPAddressFields) {
	m.ID, m.NetworkID, m.Address, m.Status = types.StringValue(f.Id), types.StringValue(f.Network.Id), types.StringValue(f.Address), types.StringValue(string(f.Status))
	m.DNSName, m.Description, m.PortID = str(f.DnsName), str(f.Description), ref(f.Port)
}

func ipAddressResource() resource.Resource {
	return newResource(crud[ipAddressModel]{
		name: "ip_address",
		schema: schema.Schema{Description: "An address of a network, allocated on create with allocateIPAddress: the given address, " +
			"or the lowest free one. The server serializes allocations, so parallel creates never get the same address.", Attributes: map[string]schema.Attribute{
			"id":          idAttribute(),
			"network_id":  stringAttr("The network to allocate from.", required, replace),
			"address":     stringAttr("The address: given, or the lowest free one when left out.", optional, computed, replace),
			"status":      stringAttr("ALLOCATED (default) or RESERVED.", optional, computed, replace),
			"dns_name":    stringAttr("DNS name."),
			"description": stringAttr(""),
			"port_id":     stringAttr("The port the address is bound to."),
		}},
		fields: map[string]string{"networkID": "network_id", "dnsName": "dns_name"},
		id:     func(m *ipAddressModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *ipAddressModel) error {
			r, err := apiclient.AllocateIPAddress(ctx, c, apiclient.AllocateIPAddressInput{NetworkID: m.NetworkID.ValueString(), Address: strPtr(m.Address),
				Status: enumPtr[apiclient.IPAddressStatus](m.Status), PortID: strPtr(m.PortID), DnsName: strPtr(m.DNSName), Description: strPtr(m.Description)})
			if err != nil {
				return err
			}
			m.set(&r.AllocateIPAddress.IPAddressFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *ipAddressModel) (bool, error) {
			r, err := apiclient.GetIPAddress(ctx, c, m.ID.ValueString())
			if err != nil || len(r.IpAddresses.Edges) == 0 || r.IpAddresses.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.IpAddresses.Edges[0].Node.IPAddressFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *ipAddressModel) error {
			r, err := apiclient.UpdateIPAddress(ctx, c, s.ID.ValueString(), apiclient.UpdateIPAddressInput{
				DnsName: strPtr(p.DNSName), ClearDNSName: clear(p.DNSName, s.DNSName),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description),
				PortID: strPtr(p.PortID), ClearPort: clear(p.PortID, s.PortID)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateIPAddress.IPAddressFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *ipAddressModel) error {
			_, err := apiclient.ReleaseIPAddress(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_ssh_key

type sshKeyModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	PublicKey   types.String `tfsdk:"public_key"`
	Fingerprint types.String `tfsdk:"fingerprint"`
	TenantID    types.String `tfsdk:"tenant_id"`
}

func (m *sshKeyModel) set(f *apiclient.SSHKeyFields) {
	m.ID, m.Name, m.Description, m.PublicKey = types.StringValue(f.Id), types.StringValue(f.Name), str(f.Description), types.StringValue(f.PublicKey)
	m.Fingerprint, m.TenantID = str(f.Fingerprint), ref(f.Tenant)
}

func sshKeyResource() resource.Resource {
	return newResource(crud[sshKeyModel]{
		name: "ssh_key",
		schema: schema.Schema{Description: "A public SSH key, put on the config drive of the VMs that name it.", Attributes: map[string]schema.Attribute{
			"id":          idAttribute(),
			"name":        stringAttr("Name, unique per owner.", required),
			"description": stringAttr(""),
			"public_key":  stringAttr("One authorized_keys line: type, base64 key and an optional comment.", required, replace),
			"fingerprint": stringAttr("SHA256 fingerprint.", computed),
			"tenant_id":   stringAttr("The tenant owning the key.", optional, replace),
		}},
		fields: map[string]string{"publicKey": "public_key"},
		id:     func(m *sshKeyModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *sshKeyModel) error {
			r, err := apiclient.CreateSSHKey(ctx, c, apiclient.CreateSSHKeyInput{Name: m.Name.ValueString(), Description: strPtr(m.Description),
				PublicKey: m.PublicKey.ValueString(), TenantID: strPtr(m.TenantID)})
			if err != nil {
				return err
			}
			m.set(&r.CreateSSHKey.SSHKeyFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *sshKeyModel) (bool, error) {
			r, err := apiclient.GetSSHKey(ctx, c, m.ID.ValueString())
			if err != nil || len(r.SshKeys.Edges) == 0 || r.SshKeys.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.SshKeys.Edges[0].Node.SSHKeyFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *sshKeyModel) error {
			r, err := apiclient.UpdateSSHKey(ctx, c, s.ID.ValueString(), apiclient.UpdateSSHKeyInput{Name: strPtr(p.Name),
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateSSHKey.SSHKeyFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *sshKeyModel) error {
			_, err := apiclient.DeleteSSHKey(ctx, c, s.ID.ValueString())
			return err
		},
	})
}

// ---------------------------------------------------------------- virtflow_security_rule

type securityRuleModel struct {
	ID               types.String `tfsdk:"id"`
	Description      types.String `tfsdk:"description"`
	Direction        types.String `tfsdk:"direction"`
	Protocol         types.String `tfsdk:"protocol"`
	PortFrom         types.Int64  `tfsdk:"port_from"`
	PortTo           types.Int64  `tfsdk:"port_to"`
	CIDR             types.String `tfsdk:"cidr"`
	Action           types.String `tfsdk:"action"`
	Priority         types.Int64  `tfsdk:"priority"`
	TenantID         types.String `tfsdk:"tenant_id"`
	VirtualMachineID types.String `tfsdk:"virtual_machine_id"`
}

func (m *securityRuleModel) set(f *apiclient.SecurityRuleFields) {
	m.ID, m.Description = types.StringValue(f.Id), str(f.Description)
	m.Direction, m.Protocol, m.Action = types.StringValue(string(f.Direction)), types.StringValue(string(f.Protocol)), types.StringValue(string(f.Action))
	m.PortFrom, m.PortTo, m.CIDR, m.Priority = intv(f.PortFrom), intv(f.PortTo), types.StringValue(f.Cidr), types.Int64Value(int64(f.Priority))
	m.TenantID, m.VirtualMachineID = types.StringValue(f.Tenant.Id), types.StringValue(f.VirtualMachine.Id)
}

func securityRuleResource() resource.Resource {
	return newResource(crud[securityRuleModel]{
		name: "security_rule",
		schema: schema.Schema{Description: "An ACL rule of a VM, applied by its node with nftables in the namespace of each of the VM's " +
			"addresses (routed network mode). Rules are tried by ascending priority; the first match decides; a direction with rules " +
			"drops what no rule allows.", Attributes: map[string]schema.Attribute{
			"id":                 idAttribute(),
			"description":        stringAttr(""),
			"direction":          stringAttr("INGRESS (to the VM) or EGRESS (from it).", required),
			"protocol":           stringAttr("ANY, TCP, UDP or ICMP.", optional, computed),
			"port_from":          intAttr("First port of the range (TCP/UDP)."),
			"port_to":            intAttr("Last port of the range (default: port_from)."),
			"cidr":               stringAttr("The peer's addresses (default 0.0.0.0/0).", optional, computed),
			"action":             stringAttr("ALLOW or DENY (default ALLOW).", optional, computed),
			"priority":           intAttr("Rules are tried in ascending priority (default 100).", optional, computed),
			"tenant_id":          stringAttr("The tenant owning the rule (the VM's).", required, replace),
			"virtual_machine_id": stringAttr("The VM the rule applies to.", required, replace),
		}},
		fields: map[string]string{"virtualMachineID": "virtual_machine_id", "portFrom": "port_from", "portTo": "port_to"},
		id:     func(m *securityRuleModel) string { return m.ID.ValueString() },
		create: func(ctx context.Context, c *apiclient.Client, m *securityRuleModel) error {
			r, err := apiclient.CreateSecurityRule(ctx, c, apiclient.CreateSecurityRuleInput{Description: strPtr(m.Description),
				Direction: apiclient.SecurityRuleDirection(m.Direction.ValueString()), Protocol: enumPtr[apiclient.SecurityRuleProtocol](m.Protocol),
				PortFrom: intPtr(m.PortFrom), PortTo: intPtr(m.PortTo), Cidr: strPtr(m.CIDR), Action: enumPtr[apiclient.SecurityRuleAction](m.Action),
				Priority: intPtr(m.Priority), TenantID: m.TenantID.ValueString(), VirtualMachineID: m.VirtualMachineID.ValueString()})
			if err != nil {
				return err
			}
			m.set(&r.CreateSecurityRule.SecurityRuleFields)
			return nil
		},
		read: func(ctx context.Context, c *apiclient.Client, m *securityRuleModel) (bool, error) {
			r, err := apiclient.GetSecurityRule(ctx, c, m.ID.ValueString())
			if err != nil || len(r.SecurityRules.Edges) == 0 || r.SecurityRules.Edges[0].Node == nil {
				return false, err
			}
			m.set(&r.SecurityRules.Edges[0].Node.SecurityRuleFields)
			return true, nil
		},
		update: func(ctx context.Context, c *apiclient.Client, p, s *securityRuleModel) error {
			dir := apiclient.SecurityRuleDirection(p.Direction.ValueString())
			r, err := apiclient.UpdateSecurityRule(ctx, c, s.ID.ValueString(), apiclient.UpdateSecurityRuleInput{
				Description: strPtr(p.Description), ClearDescription: clear(p.Description, s.Description), Direction: &dir,
				Protocol: enumPtr[apiclient.SecurityRuleProtocol](p.Protocol), PortFrom: intPtr(p.PortFrom), ClearPortFrom: clear(p.PortFrom, s.PortFrom),
				PortTo: intPtr(p.PortTo), ClearPortTo: clear(p.PortTo, s.PortTo), Cidr: strPtr(p.CIDR),
				Action: enumPtr[apiclient.SecurityRuleAction](p.Action), Priority: intPtr(p.Priority)})
			if err != nil {
				return err
			}
			p.set(&r.UpdateSecurityRule.SecurityRuleFields)
			return nil
		},
		delete: func(ctx context.Context, c *apiclient.Client, s *securityRuleModel) error {
			_, err := apiclient.DeleteSecurityRule(ctx, c, s.ID.ValueString())
			return err
		},
	})
}
