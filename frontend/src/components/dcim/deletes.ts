// The delete mutations of the DCIM records (entgql SafeDelete: CONFLICT naming the dependents).
import { graphql } from '../../gql';

export const DeleteDatacenterDocument = graphql(`
  mutation DeleteDatacenter($id: ID!) {
    deleteDatacenter(id: $id)
  }
`);
export const DeleteFloorDocument = graphql(`
  mutation DeleteFloor($id: ID!) {
    deleteFloor(id: $id)
  }
`);
export const DeleteRackDocument = graphql(`
  mutation DeleteRack($id: ID!) {
    deleteRack(id: $id)
  }
`);
export const DeleteHostDocument = graphql(`
  mutation DeleteHost($id: ID!) {
    deleteHost(id: $id)
  }
`);
export const DeletePortDocument = graphql(`
  mutation DeletePort($id: ID!) {
    deletePort(id: $id)
  }
`);
export const DeleteLinkDocument = graphql(`
  mutation DeleteLink($id: ID!) {
    deleteLink(id: $id)
  }
`);
