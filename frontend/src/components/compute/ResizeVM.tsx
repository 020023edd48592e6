// The resize action of a VM page: choose another flavor and resizeVirtualMachine. Only a
// STOPPED VM can be resized (the API says why otherwise); it stays on its node when the node
// has room, else it moves (cold) to another one.
import { useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import { ChoiceSelect } from '../ChoiceSelect';
import { Problem } from '../Problem';
import { describeFlavor, useChoices } from './choices';

const ResizeDocument = graphql(`
  mutation ResizeVM($id: ID!, $flavorID: ID!) {
    resizeVirtualMachine(id: $id, flavorID: $flavorID) { id revision statusReason flavor { id name vcpus memoryMB } }
  }
`);

/** Props of ResizeVM. */
export interface ResizeVMProps {
  id: string;
  status: string;
  flavorID: string;
}

/** A flavor choice and a Resize button; disabled unless the VM is STOPPED. */
export function ResizeVM({ id, status, flavorID }: ResizeVMProps) {
  const choices = useChoices();
  const [flavor, setFlavor] = useState('');
  const [result, resize] = useMutation(ResizeDocument);
  const stopped = status === 'STOPPED';
  const others = choices.flavors.filter((f) => f.id !== flavorID);
  return (
    <form
      aria-label="Resize VM"
      className="resize-vm"
      onSubmit={(e) => {
        e.preventDefault();
        if (flavor) void resize({ id, flavorID: flavor });
      }}
    >
      <ChoiceSelect label="Resize to" value={flavor} onChange={setFlavor} options={others} empty="choose…" describe={describeFlavor} />
      <button type="submit" disabled={!stopped || !flavor || result.fetching} title={stopped ? '' : 'Stop the VM to resize it'}>
        {result.fetching ? 'Resizing…' : 'Resize'}
      </button>
      {!stopped && <span className="muted small"> stop the VM to resize it</span>}
      <Problem error={result.error} title="The VM was not resized" />
    </form>
  );
}
