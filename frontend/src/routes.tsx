// The dashboard's pages and their paths. Each page is its own chunk, loaded on first visit, so
// the first paint downloads only the frame (the network map's graph layout loads with its page).
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

type Page = LazyExoticComponent<ComponentType>;
const page = (load: () => Promise<{ default: ComponentType }>): Page => lazy(load);

/** Every signed-in page by path (react-router patterns). */
export const pages: { path: string; page: Page }[] = [
  { path: '/', page: page(() => import('./pages/overview/OverviewPage')) },
  { path: '/tokens', page: page(() => import('./pages/tokens/TokensPage')) },
  { path: '/ssh-keys', page: page(() => import('./pages/sshkeys/SSHKeysPage')) },
  { path: '/datacenters', page: page(() => import('./pages/datacenters/DatacentersPage')) },
  { path: '/datacenters/:id', page: page(() => import('./pages/datacenters/DatacenterPage')) },
  { path: '/floors/:id', page: page(() => import('./pages/datacenters/FloorPage')) },
  { path: '/racks/:id', page: page(() => import('./pages/datacenters/RackPage')) },
  { path: '/hosts/:id', page: page(() => import('./pages/datacenters/HostPage')) },
  { path: '/dcim/import', page: page(() => import('./pages/dcim/ImportPage')) },
  { path: '/clusters', page: page(() => import('./pages/clusters/ClustersPage')) },
  { path: '/clusters/:id', page: page(() => import('./pages/clusters/ClusterPage')) },
  { path: '/network', page: page(() => import('./pages/network/NetworkMapPage')) },
  { path: '/network/trace/:portId', page: page(() => import('./pages/network/TracePage')) },
  { path: '/network/routes', page: page(() => import('./pages/network/RoutesPage')) },
  { path: '/vms', page: page(() => import('./pages/vms/VMsPage')) },
  { path: '/vms/new', page: page(() => import('./pages/vms/CreateVMPage')) },
  { path: '/vms/:id', page: page(() => import('./pages/vms/VMPage')) },
  { path: '/images', page: page(() => import('./pages/images/ImagesPage')) },
  { path: '/services', page: page(() => import('./pages/services/ServicesPage')) },
  { path: '/services/:id', page: page(() => import('./pages/services/ServicePage')) },
  { path: '/load-balancers', page: page(() => import('./pages/loadbalancers/LoadBalancersPage')) },
  { path: '/load-balancers/:id', page: page(() => import('./pages/loadbalancers/LoadBalancerPage')) },
  { path: '/global-services', page: page(() => import('./pages/globalservices/GlobalServicesPage')) },
  { path: '/global-services/:id', page: page(() => import('./pages/globalservices/GlobalServicePage')) },
  { path: '/kubernetes', page: page(() => import('./pages/kubernetes/KubernetesClustersPage')) },
  { path: '/kubernetes/:id', page: page(() => import('./pages/kubernetes/KubernetesClusterPage')) },
  { path: '/nodes', page: page(() => import('./pages/nodes/NodesPage')) },
  { path: '/nodes/:id', page: page(() => import('./pages/nodes/NodePage')) },
  { path: '/tenants', page: page(() => import('./pages/tenants/TenantsPage')) },
  { path: '/tenants/:id', page: page(() => import('./pages/tenants/TenantPage')) },
  { path: '/usage', page: page(() => import('./pages/usage/UsagePage')) },
  { path: '/maintainers', page: page(() => import('./pages/maintainers/MaintainersPage')) },
  { path: '/alerts', page: page(() => import('./pages/alerts/AlertsPage')) },
  { path: '/maintenance', page: page(() => import('./pages/maintenance/MaintenancePage')) },
  { path: '/silences', page: page(() => import('./pages/monitoring/SilencesPage')) },
  { path: '/events', page: page(() => import('./pages/monitoring/EventsPage')) },
  { path: '/rules', page: page(() => import('./pages/monitoring/RulesPage')) },
  { path: '/deliveries', page: page(() => import('./pages/monitoring/DeliveriesPage')) },
  { path: '/changes', page: page(() => import('./pages/changes/ChangeLogPage')) },
  { path: '/people', page: page(() => import('./pages/people/PeoplePage')) },
  { path: '/ipam/networks', page: page(() => import('./pages/ipam/NetworksPage')) },
  { path: '/ipam/networks/:id', page: page(() => import('./pages/ipam/NetworkPage')) },
];
